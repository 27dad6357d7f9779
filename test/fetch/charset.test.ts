/** Charset decoding (src/fetch/charset.ts): the UTF-8 fast path decodes like TextDecoder. */
import t from 'tap';
import { decodeText } from '../../src/fetch/charset.js';

t.test('declared UTF-8, valid and invalid bytes, decodes as TextDecoder does', async (t) => {
  const samples = [
    Buffer.from('<p>héllo € “q” 日本 😀</p>'),
    // Truncated and invalid sequences, a lone surrogate encoding: each becomes U+FFFD.
    Buffer.from([0x3c, 0x70, 0x3e, 0xc3, 0x28, 0xe2, 0x82, 0x41, 0xf0, 0x9f, 0x98, 0x80, 0xed, 0xa0, 0x80, 0xff]),
  ];
  for (const b of samples) {
    for (const ct of ['text/html; charset=utf-8', 'text/html; charset="UTF8"']) {
      const r = decodeText(b, ct);
      t.equal(r.text, new TextDecoder('utf-8').decode(b), ct);
    }
    const meta = Buffer.concat([Buffer.from('<meta charset="utf-8">'), b]);
    t.equal(decodeText(meta, 'text/html').text, new TextDecoder('utf-8').decode(meta), 'from <meta charset>');
  }
});
