/**
 * Raw HTTP over a socket, for requests `fetch` cannot send (malformed HTTP, bare LF line ends).
 */
import net from 'node:net';

/**
 * Writes `request` on a new connection to 127.0.0.1:`port` and resolves everything the server
 * sent once it closes the connection.
 */
export function raw(port: number, request: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let out = '';
    sock.setEncoding('utf8');
    sock.on('data', (c: string) => (out += c));
    sock.on('end', () => resolve(out));
    sock.on('error', reject);
    sock.write(request);
  });
}
