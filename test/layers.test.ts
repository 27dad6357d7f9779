/**
 * The code's layers point down: a unit (a folder under src/, an entry file directly in src/,
 * workers/, jobs/) imports only units on a lower floor, other folders are entered only through
 * their `index.ts`, and no file imports itself back through a cycle. docs/ARCHITECTURE.md
 * describes the same floors.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { findCycles, importEdges, ROOT, unitOf } from './helpers/import-graph.js';

/** Floors from the ground up; a unit may import units on lower floors only. */
export const FLOORS: string[][] = [
  ['src/core'], // errors, logger, shared types, URL helpers, config, worker threads and pool task names
  ['src/text'], // folding, tokenising, stemming, stop words, typo automata, RE2 URL patterns
  ['src/index'], // segments, manifest, commit chain, merges
  ['src/projects'], // project registry and settings
  ['src/search', 'src/ingest', 'src/analytics', 'src/fetch'], // src/fetch: one page fetched and extracted (pool threads)
  ['src/crawl', 'src/snapshot'], // the crawler: queue, politeness, robots, sitemaps, schedules (main thread); snapshots: export, search nodes, restore
  ['src/services.ts'],
  ['src/http', 'jobs', 'workers'],
  ['src/server.ts'],
  ['src/cli'],
  ['src/cli.ts', 'src/main.ts'],
];

const floorOf = new Map<string, number>();
FLOORS.forEach((units, floor) => units.forEach((u) => floorOf.set(u, floor)));

const edges = importEdges();
const units = new Set(edges.flatMap((e) => [unitOf(e.from), unitOf(e.to)]));

t.test('every unit has a floor', async (t) => {
  for (const unit of units) t.ok(floorOf.has(unit), `${unit} is on a floor`);
});

t.test('imports point down', async (t) => {
  const upward = edges.filter((e) => {
    const a = floorOf.get(unitOf(e.from));
    const b = floorOf.get(unitOf(e.to));
    return unitOf(e.from) !== unitOf(e.to) && (a === undefined || b === undefined || b >= a);
  });
  t.same(
    upward.map((e) => `${e.from} -> ${e.to}`),
    [],
    'no import to a unit on the same or a higher floor',
  );
});

t.test('folders are entered through their index.ts', async (t) => {
  const folders = [...units].filter((u) => !u.endsWith('.ts'));
  for (const folder of folders) t.ok(existsSync(path.join(ROOT, folder, 'index.ts')) || folder === 'workers', `${folder}/index.ts exists`);
  const deep = edges.filter((e) => {
    const target = unitOf(e.to);
    return unitOf(e.from) !== target && !target.endsWith('.ts') && target !== 'workers' && e.to !== `${target}/index.ts`;
  });
  t.same(
    deep.map((e) => `${e.from} -> ${e.to}`),
    [],
    'no deep import into another folder',
  );
});

t.test('no import cycles between files', async (t) => {
  const graph = new Map<string, Set<string>>();
  for (const e of edges) {
    const row = graph.get(e.from) ?? new Set<string>();
    row.add(e.to);
    graph.set(e.from, row);
  }
  t.same(findCycles(graph).map((c) => c.join(' -> ')), []);
});

t.test('the checker sees a known edge (it reads the sources at all)', async (t) => {
  t.ok(edges.some((e) => e.from === 'src/server.ts'), 'src/server.ts has imports');
});
