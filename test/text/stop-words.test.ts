import t from 'tap';
import winkNLP from 'wink-nlp';
import model from 'wink-eng-lite-web-model';
import { ENGLISH_STOP_WORDS, isEnglishStopWord } from '../../src/text/index.js';

// The stop-word list is an extracted copy of wink-nlp's, so that threads need not load the
// language model. This test recomputes it through wink-nlp's own API and compares, so a model
// upgrade that changes it fails here.
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

