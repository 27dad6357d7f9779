/** Typings for wink-nlp's Porter2 stemmer file inside its English model package (it ships none). */
declare module 'wink-eng-lite-web-model/dist/porter-stemmer.js' {
  /** Porter2 stem of a word (lower-cases it first); words under 3 characters come back as they are. */
  export default function stem(word: string): string;
}
