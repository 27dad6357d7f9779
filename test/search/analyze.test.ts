import t from 'tap';
import winkNLP from 'wink-nlp';
import model from 'wink-eng-lite-web-model';
import { isEnglishStopWord, stemEn } from '../../src/search/analyze.js';
import { ENGLISH_STOP_WORDS } from '../../src/search/stop-words-en.js';

// The analyser uses wink-nlp's stemmer file and an extracted copy of wink-nlp's stop-word list,
// so that threads need not load the whole language model. These tests recompute both through
// wink-nlp's own API and compare, so a model upgrade that changes either fails here.
const nlp = winkNLP(model, []);
const its = nlp.its;
const lexicon = (model as unknown as { core(): { features: { lexeme: { list: string[] } } } })
  .core().features.lexeme.list.filter((w) => /^[a-z0-9]+$/.test(w));

t.test('stop words are exactly wink-nlp\'s over its whole lexicon', async (t) => {
  const fromWink = lexicon.filter((w) => {
    const flags = nlp.readDoc(w).tokens().out(its.stopWordFlag) as boolean[];
    return flags.length === 1 && flags[0] === true;
  });
  t.ok(fromWink.length > 200, `wink-nlp flags ${fromWink.length} stop words`);
  t.same([...ENGLISH_STOP_WORDS].sort(), [...new Set(fromWink)].sort());
  const wrong = lexicon.filter((w) => isEnglishStopWord(w) !== fromWink.includes(w));
  t.same(wrong, []);
  t.equal(isEnglishStopWord('the'), true);
  t.equal(isEnglishStopWord('postgresql'), false);
});

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
