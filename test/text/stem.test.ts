import t from 'tap';
import winkNLP from 'wink-nlp';
import model from 'wink-eng-lite-web-model';
import { stem, stemEn } from '../../src/text/index.js';

// The analyser calls wink-nlp's stemmer file directly, so that threads need not load the whole
// language model. This test stems through wink-nlp's own API and compares, so a model upgrade
// that changes the stemmer fails here.
const nlp = winkNLP(model, []);
const its = nlp.its;
const lexicon = (model as unknown as { core(): { features: { lexeme: { list: string[] } } } })
  .core().features.lexeme.list.filter((w) => /^[a-z0-9]+$/.test(w));

t.test('stems are wink-nlp\'s its.stem for every lexicon word', async (t) => {
  const words = lexicon.filter((w) => /^[a-z]{3,}$/.test(w));
  t.ok(words.length > 50_000);
  // One document of all the words (readDoc per word would cost ~40 µs each). wink splits a few
  // words into tokens (`aint` → `ai`, `nt`); every token of 3+ letters is compared.
  const tokens = nlp.readDoc(words.join(' ')).tokens();
  const values = tokens.out(its.value) as string[];
  // (wink's typings do not accept its.stem in out(); it works at run time)
  const stems = tokens.out(its.stem as unknown as typeof its.value) as string[];
  let compared = 0;
  const diff: string[] = [];
  values.forEach((v, i) => {
    if (!/^[a-z]{3,}$/.test(v)) return;
    compared++;
    if (stemEn(v) !== stems[i]) diff.push(`${v}: ${stemEn(v)} vs ${stems[i]}`);
  });
  t.ok(compared > 50_000, `${compared} words compared`);
  t.same(diff.slice(0, 10), []);
  t.equal(stemEn('indexes'), 'index');
  t.equal(stemEn('running'), 'run');
  // Digits and very short words are kept as they are.
  t.equal(stemEn('utf8'), 'utf8');
  t.equal(stemEn('as'), 'as');
});

t.test('stemming by language', async (t) => {
  t.equal(stemEn('tables'), 'tabl');
  t.equal(stemEn('table'), 'tabl');
  t.equal(stemEn('15'), '15', 'numbers are not stemmed');
  t.equal(stem('tables', 'en'), 'tabl');
  t.equal(stem('tables', 'pl'), 'tables', 'no stemmer: the word itself');
  t.equal(stem('pakete', 'de'), 'paket', 'Snowball German');
});
