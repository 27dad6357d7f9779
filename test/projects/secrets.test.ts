import t from 'tap';
import { defaultSettings, keepSecrets, maskSecrets, MASKED_SECRET, withoutSecrets } from '../../src/projects/index.js';
import type { Settings } from '../../src/core/index.js';

const withKey = (key: string | null): Settings => {
  const d = defaultSettings();
  return { ...d, search: { ...d.search, semantic: { ...d.search.semantic!, http: { ...d.search.semantic!.http, apiKey: key } } } };
};

t.test('answers mask a stored key, never a missing one; the stored object is not changed', async (t) => {
  const stored = withKey('sk-live-123');
  const masked = maskSecrets(stored);
  t.equal(masked.search.semantic?.http.apiKey, MASKED_SECRET);
  t.notMatch(JSON.stringify(masked), /sk-live-123/);
  t.equal(stored.search.semantic?.http.apiKey, 'sk-live-123', 'a copy is masked');
  t.equal(maskSecrets(withKey(null)).search.semantic?.http.apiKey, null, 'no key: null, so a client sees none is set');
  t.equal(withoutSecrets(stored).search.semantic?.http.apiKey, null, 'snapshots without keys carry none');
  t.same({ ...withoutSecrets(stored), search: null }, { ...stored, search: null }, 'everything else unchanged');
});

t.test('a body that sends the mask back keeps the stored key; anything else is taken as given', async (t) => {
  const stored = withKey('sk-live-123');
  const body = { crawler: { maxDepth: 3 }, search: { language: 'de', semantic: { embedder: 'http', http: { url: 'http://e.test/v1/embeddings', apiKey: MASKED_SECRET } } } };
  t.same(keepSecrets(body, stored), { crawler: { maxDepth: 3 }, search: { language: 'de', semantic: { embedder: 'http', http: { url: 'http://e.test/v1/embeddings', apiKey: 'sk-live-123' } } } });
  t.equal((body.search.semantic.http as { apiKey: string }).apiKey, MASKED_SECRET, 'the body itself is not changed');
  const none = keepSecrets({ search: { semantic: { http: { apiKey: MASKED_SECRET } } } }, withKey(null)) as { search: { semantic: { http: { apiKey: unknown } } } };
  t.equal(none.search.semantic.http.apiKey, null, 'the mask with no stored key: none (the mask is never stored as a key)');
  for (const other of [{ search: { semantic: { http: { apiKey: 'sk-new' } } } }, { search: { semantic: { http: { apiKey: null } } } }, { search: null }, { search: { semantic: [] } }, 'not an object', null]) {
    t.equal(keepSecrets(other, stored), other, `unchanged: ${JSON.stringify(other)}`);
  }
});
