/**
 * Text decoding of fetched bytes: BOM, then the Content-Type charset, then a `<meta charset>` /
 * `http-equiv` declaration in the first 1024 bytes (the HTML sniffing window), then UTF-8.
 * Pure; any thread.
 */
import iconv from 'iconv-lite';

function fromContentType(contentType: string | undefined): string | null {
  const m = contentType?.match(/charset\s*=\s*["']?([\w.:-]+)/i);
  return m ? m[1].toLowerCase() : null;
}

function fromMeta(head: string): string | null {
  const m =
    head.match(/<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i) ??
    head.match(/<meta[^>]+content\s*=\s*["'][^"']*charset\s*=\s*([\w.:-]+)/i);
  return m ? m[1].toLowerCase() : null;
}

function decodeWith(label: string, bytes: Uint8Array): string | null {
  // Most pages: Node's own UTF-8 decoder (invalid sequences become U+FFFD, as with TextDecoder).
  if (label === 'utf-8' || label === 'utf8') return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  // WHATWG maps latin1/iso-8859-1/ascii labels to windows-1252 (what browsers do).
  const l = /^(latin1|iso-?8859-1|iso_8859-1|us-ascii|ascii)$/.test(label) ? 'windows-1252' : label;
  // iconv-lite first: Node 20's TextDecoder decodes windows-1252 as ISO-8859-1 (C1 controls
  // instead of curly quotes and the euro sign).
  if (iconv.encodingExists(l)) return iconv.decode(Buffer.from(bytes), l);
  try {
    return new TextDecoder(l).decode(bytes);
  } catch {
    return null;
  }
}

/** Decodes a body to a string, detecting the charset as described above. */
export function decodeText(body: Buffer, contentType?: string, sniffHtml = true): { text: string; charset: string } {
  if (body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) {
    return { text: new TextDecoder('utf-8').decode(body.subarray(3)), charset: 'utf-8' };
  }
  if (body.length >= 2 && body[0] === 0xff && body[1] === 0xfe) {
    return { text: new TextDecoder('utf-16le').decode(body.subarray(2)), charset: 'utf-16le' };
  }
  if (body.length >= 2 && body[0] === 0xfe && body[1] === 0xff) {
    return { text: new TextDecoder('utf-16be').decode(body.subarray(2)), charset: 'utf-16be' };
  }
  const candidates = [fromContentType(contentType)];
  if (sniffHtml) candidates.push(fromMeta(body.subarray(0, 1024).toString('latin1')));
  for (const label of candidates) {
    if (!label) continue;
    const text = decodeWith(label, body);
    if (text !== null) return { text, charset: label };
  }
  return { text: new TextDecoder('utf-8').decode(body), charset: 'utf-8' };
}
