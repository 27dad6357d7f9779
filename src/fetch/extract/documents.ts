/**
 * Text extraction from non-HTML documents with well-kept libraries; runs in the pool worker.
 *
 * | type | library |
 * |---|---|
 * | PDF | unpdf (a packaged pdf.js build for server runtimes) |
 * | DOCX | mammoth |
 * | DOC | word-extractor |
 * | XLS, XLSX, ODS | xlsx (SheetJS) |
 * | PPTX, ODT, ODP | jszip + the document's XML text runs |
 * | PPT | cfb (OLE container) + the PowerPoint text atoms |
 * | TXT | charset detection + TextDecoder |
 */
import type { DocumentType } from '../../core/index.js';
import { decodeText } from '../charset.js';
import { linesOf } from './whitespace.js';

/** The file kinds the extractor knows; more specific than {@link DocumentType}. */
export type FileKind = 'html' | 'pdf' | 'doc' | 'docx' | 'xls' | 'xlsx' | 'ppt' | 'pptx' | 'odt' | 'ods' | 'odp' | 'txt';

/** The index documentType of each file kind. */
export const DOCUMENT_TYPE_OF: Record<FileKind, DocumentType> = {
  html: 'HTML',
  pdf: 'PDF',
  doc: 'DOC',
  docx: 'DOC',
  xls: 'XLS',
  xlsx: 'XLS',
  ppt: 'PPT',
  pptx: 'PPT',
  odt: 'ODT',
  ods: 'ODS',
  odp: 'ODP',
  txt: 'TXT',
};

const BY_MIME: Record<string, FileKind> = {
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/x-pdf': 'pdf',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.ms-powerpoint': 'ppt',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/vnd.oasis.opendocument.presentation': 'odp',
  'text/plain': 'txt',
};

const BY_EXT: Record<string, FileKind> = {
  html: 'html', htm: 'html', xhtml: 'html', pdf: 'pdf', doc: 'doc', docx: 'docx', xls: 'xls', xlsx: 'xlsx',
  ppt: 'ppt', pptx: 'pptx', odt: 'odt', ods: 'ods', odp: 'odp', txt: 'txt',
};

/**
 * Decides the file kind from the Content-Type, falling back (for missing or generic types) on
 * the URL's extension and then on magic bytes. null = unsupported (806).
 */
export function detectKind(contentType: string | undefined, url: string, body: Buffer): FileKind | null {
  const mime = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (mime && BY_MIME[mime]) return BY_MIME[mime];
  const generic = !mime || mime === 'application/octet-stream' || mime === 'binary/octet-stream' || mime === 'application/download';
  if (!generic) return null;
  let ext = '';
  try {
    ext = new URL(url).pathname.split('.').pop()?.toLowerCase() ?? '';
  } catch {
    ext = '';
  }
  if (BY_EXT[ext]) return BY_EXT[ext];
  if (body.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  const head = body.subarray(0, 512).toString('latin1').toLowerCase();
  if (/<!doctype html|<html/.test(head)) return 'html';
  return null;
}

function xmlText(xml: string, paragraphTags: RegExp): string {
  return xml
    .replace(paragraphTags, '\n')
    .replace(/<text:tab\/>|<w:tab\/>/g, '\t')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_m, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_m, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&amp;/g, '&');
}

/** The `dc:title` of an office document's metadata XML ('' when none). */
function dcTitle(xml: string): string {
  return xmlText(xml.match(/<dc:title>([\s\S]*?)<\/dc:title>/)?.[1] ?? '', /$^/).trim();
}

/** Extracted text of a document plus a title when the file carries one. */
export interface DocumentText {
  title: string;
  content: string;
}

async function pdfText(body: Buffer): Promise<DocumentText> {
  const { extractText, getDocumentProxy, getMeta } = await import('unpdf');
  const pdf = await getDocumentProxy(new Uint8Array(body));
  try {
    const { text } = await extractText(pdf, { mergePages: true });
    let title = '';
    try {
      const meta = await getMeta(pdf);
      const t = (meta.info as Record<string, unknown> | undefined)?.Title;
      if (typeof t === 'string') title = t.trim();
    } catch {
      title = '';
    }
    return { title, content: linesOf(text) };
  } finally {
    await (pdf as unknown as { destroy?: () => Promise<void> }).destroy?.();
  }
}

async function zipOf(body: Buffer) {
  const JSZip = (await import('jszip')).default;
  return JSZip.loadAsync(body);
}

async function odfText(body: Buffer): Promise<DocumentText> {
  const zip = await zipOf(body);
  const content = (await zip.file('content.xml')?.async('string')) ?? '';
  const meta = (await zip.file('meta.xml')?.async('string')) ?? '';
  const title = dcTitle(meta);
  const bodyXml = content.match(/<office:body>([\s\S]*)<\/office:body>/)?.[1] ?? content;
  return { title, content: linesOf(xmlText(bodyXml, /<\/?(text:p|text:h|table:table-cell|draw:page|text:line-break)\b[^>]*>/g)) };
}

async function pptxText(body: Buffer): Promise<DocumentText> {
  const zip = await zipOf(body);
  const slides = Object.keys(zip.files)
    .filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n))
    .sort((a, b) => Number(a.match(/\d+/)![0]) - Number(b.match(/\d+/)![0]));
  const parts: string[] = [];
  for (const s of slides) parts.push(xmlText((await zip.file(s)!.async('string')) ?? '', /<\/a:p>/g));
  const core = (await zip.file('docProps/core.xml')?.async('string')) ?? '';
  const title = dcTitle(core);
  return { title, content: linesOf(parts.join('\n')) };
}

async function docxText(body: Buffer): Promise<DocumentText> {
  const mammoth = (await import('mammoth')).default;
  const { value } = await mammoth.extractRawText({ buffer: body });
  let title = '';
  try {
    const core = (await (await zipOf(body)).file('docProps/core.xml')?.async('string')) ?? '';
    title = dcTitle(core);
  } catch {
    title = '';
  }
  return { title, content: linesOf(value) };
}

async function docText(body: Buffer): Promise<DocumentText> {
  const WordExtractor = (await import('word-extractor')).default;
  const doc = await new WordExtractor().extract(body);
  return { title: '', content: linesOf(doc.getBody()) };
}

/**
 * The API of a CommonJS package loaded with `import()`: on the namespace when Node found its
 * named exports, else on the namespace's `default` (the package's `module.exports`).
 */
function commonJs<T extends { default: unknown }>(ns: T, probe: Exclude<keyof T, 'default'>): Omit<T, 'default'> {
  return (ns[probe] !== undefined ? ns : ns.default) as Omit<T, 'default'>;
}

async function sheetText(body: Buffer): Promise<DocumentText> {
  const { read, utils } = commonJs(await import('xlsx'), 'read');
  const wb = read(body, { type: 'buffer', cellDates: true });
  const parts: string[] = [];
  for (const name of wb.SheetNames) {
    const sheet = wb.Sheets[name];
    const rows = utils.sheet_to_json<unknown[]>(sheet, { header: 1, raw: false, blankrows: false });
    parts.push(name);
    for (const row of rows) parts.push(row.filter((c) => c !== null && c !== undefined && String(c).trim() !== '').join('\t'));
  }
  const title = String(wb.Props?.Title ?? '').trim();
  return { title, content: linesOf(parts.join('\n')) };
}

/**
 * Legacy PowerPoint (.ppt): the "PowerPoint Document" stream is a tree of records; slide text
 * lives in TextCharsAtom (0x0FA0, UTF-16LE) and TextBytesAtom (0x0FA8, 8-bit) records.
 */
async function pptText(body: Buffer): Promise<DocumentText> {
  const { read, find } = commonJs(await import('cfb'), 'read');
  const container = read(body, { type: 'buffer' });
  const entry = find(container, 'PowerPoint Document');
  if (!entry?.content) return { title: '', content: '' };
  const buf = Buffer.from(entry.content as Uint8Array);
  const texts: string[] = [];
  const walk = (start: number, end: number, depth: number): void => {
    let p = start;
    while (p + 8 <= end) {
      const verInst = buf.readUInt16LE(p);
      const type = buf.readUInt16LE(p + 2);
      const len = buf.readUInt32LE(p + 4);
      const bodyStart = p + 8;
      const bodyEnd = Math.min(bodyStart + len, end);
      if ((verInst & 0x0f) === 0x0f && depth < 16) walk(bodyStart, bodyEnd, depth + 1);
      else if (type === 0x0fa0) texts.push(buf.subarray(bodyStart, bodyEnd).toString('utf16le'));
      else if (type === 0x0fa8) texts.push(buf.subarray(bodyStart, bodyEnd).toString('latin1'));
      p = bodyStart + len;
    }
  };
  walk(0, buf.length, 0);
  // Master-slide placeholders ("Click to edit Master title style") are not content.
  const content = texts.map((t) => t.replace(/\r/g, '\n')).filter((t) => !/^Click to (edit|add)/i.test(t.trim()) && !/^[*\s]*$/.test(t));
  return { title: '', content: linesOf(content.join('\n')) };
}

const EXTRACTORS: Record<Exclude<FileKind, 'html'>, (body: Buffer, contentType?: string) => Promise<DocumentText>> = {
  pdf: pdfText,
  docx: docxText,
  doc: docText,
  xls: sheetText,
  xlsx: sheetText,
  ods: sheetText,
  pptx: pptxText,
  ppt: pptText,
  odt: odfText,
  odp: odfText,
  txt: async (body, contentType) => ({ title: '', content: linesOf(decodeText(body, contentType, false).text) }),
};

/**
 * Extracts the text of a non-HTML document. Throws on a corrupt file (the caller reports 806).
 *
 * @example const { title, content } = await extractDocument('pdf', body);
 */
export function extractDocument(kind: Exclude<FileKind, 'html'>, body: Buffer, contentType?: string): Promise<DocumentText> {
  return EXTRACTORS[kind](body, contentType);
}
