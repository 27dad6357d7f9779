/** Minimal typings for word-extractor (the package ships none). */
declare module 'word-extractor' {
  interface WordDocument {
    getBody(): string;
    getHeaders?(): string;
    getFootnotes?(): string;
  }
  export default class WordExtractor {
    extract(source: string | Buffer): Promise<WordDocument>;
  }
}
