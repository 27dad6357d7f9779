/**
 * A small project for the snapshot tests: 48 pages over a few topics, three content groups, a
 * filter and a data point, settings with a synonym-free result mapping set, and a query set
 * that exercises ranking, prefixes, typos, phrases, filters, facets, paging, sorting, snippets
 * and suggest (with query suggestions logged on the primary beforehand).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { api, type TestServer } from '../helpers/server.js';

const TOPICS = [
  ['install', 'Installing the widget on a static site needs one script tag and a site id.'],
  ['config', 'Configuration options of the crawler: rate limits, robots rules and sitemaps.'],
  ['search', 'Search results are ranked with BM25F over titles, headings and content.'],
  ['privacy', 'Query logs keep hashed visitor ids only; retention is configurable per project.'],
] as const;

export function page(i: number, version = 'one'): Record<string, unknown> {
  const [topic, text] = TOPICS[i % TOPICS.length]!;
  return {
    url: `https://docs.test/${topic}/${String(i).padStart(3, '0')}`,
    title: `${topic[0]!.toUpperCase()}${topic.slice(1)} guide ${i} ${version}`,
    content: `${text} Page ${i} of the ${topic} section, version ${version}. ${i % 5 === 0 ? 'Troubleshooting tips included.' : ''}`,
    contentGroup: i % 3 === 0 ? 'Blog' : i % 3 === 1 ? 'Docs' : '',
    imageUrl: '',
    appendPageContent: false,
    filters: [{ key: 'fid#1', value: [i % 2 === 0 ? 'beginner' : 'expert'] }],
    dataPoints: [{ key: 'rank', value: String((i * 7) % 23) }],
  };
}

export const SETTINGS = {
  filters: [{ id: 'fid#1', name: 'Level', type: 'multiple' }],
  dataPoints: [{ key: 'rank', type: 'number', sortable: true }],
  search: {
    resultMappings: [{ trigger: { type: 'equals', value: 'pinned guide' }, action: { type: 'pin', urls: ['https://docs.test/search/010'] } }],
  },
};

/** Search query strings (after `/sites?site=default&log=false&`). */
export const SEARCHES = [
  'query=widget',
  'query=widget&limit=3&offset=2',
  'query=crawler%20rate',
  'query=%22static%20site%22',
  'query=confg',
  'query=troubl',
  'query=*&limit=50',
  'query=guide&groupResults=false&limit=20',
  'query=guide&includeContent=true&highlightQueryTerms=true',
  'query=guide&filters=' + encodeURIComponent('[{"fid#1":["expert"]}]') + '&filterOptions=true',
  'query=guide&sort=rank&sortOrder=DESC',
  'query=pinned%20guide',
  'query=privacy%20-hashed',
  'query=nothingmatcheshere',
  'query=search&includeContentGroups=' + encodeURIComponent('["Docs"]'),
];

/** Suggest query strings (after `/sites/suggest?site=default&`). */
export const SUGGESTS = ['query=wi', 'query=conf', 'query=gu&includeContent=true', 'query=search&groupResults=false', 'query=pr&maxQuerySuggestions=5', 'query=tro'];

/** Logged on the primary so query suggestions have data. */
export const LOGGED = ['widget install', 'widget install', 'widget config', 'privacy logs', 'guide', 'guide', 'guide'];

/** Sets up the `default` project of a test server with the fixture (pages, settings, logged searches). */
export async function loadFixture(s: TestServer, pages = 48): Promise<void> {
  let r = await api(s.url, '/admin/projects/default/settings', { method: 'PATCH', token: s.masterKey, json: SETTINGS });
  if (r.status !== 200) throw new Error(`settings: ${r.status} ${r.text}`);
  r = await api(s.url, `/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', json: Array.from({ length: pages }, (_, i) => page(i)) });
  if (r.status !== 200) throw new Error(`pages: ${r.status} ${r.text}`);
  for (const q of LOGGED) await api(s.url, `/sites?site=default&query=${encodeURIComponent(q)}`);
  s.services.analytics.flush();
}

/** The raw response bodies of every query of the set. */
export async function answers(base: string, querySuggestions = true): Promise<string[]> {
  const out: string[] = [];
  for (const q of SEARCHES) out.push(`${q} → ${(await api(base, `/sites?site=default&log=false&${q}`)).text}`);
  for (const s of SUGGESTS) {
    const q = querySuggestions ? s : s.replace(/&maxQuerySuggestions=\d+/, '') + '&maxQuerySuggestions=0';
    out.push(`suggest ${q} → ${(await api(base, `/sites/suggest?site=default&${q}`)).text}`);
  }
  return out;
}

/**
 * Checks a snapshot directory as a reader would: index.json parses, every manifest it names
 * exists with its hash, every blob those manifests name exists with its hash. Returns the
 * index's generation per project.
 */
export function verifySnapshot(dir: string): Record<string, number> {
  const index = JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8')) as { projects: Record<string, { manifest: string; sha256: string; generation: number }> };
  const out: Record<string, number> = {};
  for (const [siteId, p] of Object.entries(index.projects)) {
    const text = fs.readFileSync(path.join(dir, p.manifest));
    if (sha256(text) !== p.sha256) throw new Error(`${p.manifest}: hash mismatch`);
    const m = JSON.parse(text.toString('utf8')) as { segments: Array<{ sha256: string }>; querySuggestions: { sha256: string } };
    for (const h of [...m.segments.map((s) => s.sha256), m.querySuggestions.sha256]) {
      const blob = fs.readFileSync(path.join(dir, 'blobs', 'sha256', h.slice(0, 2), h));
      if (sha256(blob) !== h) throw new Error(`blob ${h}: hash mismatch`);
    }
    out[siteId] = p.generation;
  }
  return out;
}

function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}
