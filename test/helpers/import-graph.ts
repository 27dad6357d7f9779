/**
 * The import graph of src/, workers/ and jobs/, read from the sources with the TypeScript
 * scanner (no type-checking, so it is quick): every static `import … from`, `export … from` and
 * `import('…')` with a relative specifier, resolved to a file.
 *
 * Used by test/layers.test.ts (layers point down, no cycles, folders entered through their
 * `index.ts`) and runnable on its own to print the folder-level graph:
 *
 * ```sh
 * node --import tsx test/helpers/import-graph.ts
 * ```
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** One import edge between two repository-relative files. */
export interface ImportEdge {
  from: string;
  to: string;
  /** `import type …` / `export type … from`: erased at run time. */
  typeOnly: boolean;
}

function listTs(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    // src/web is browser code bundled with its own tsconfig and served as files: not a layer.
    if (statSync(full).isDirectory()) {
      if (path.relative(ROOT, full) !== path.join('src', 'web')) listTs(full, out);
    }
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** Resolves a relative `./x.js` specifier to the `.ts` file it names (or its folder's index.ts). */
function resolve(fromFile: string, spec: string): string | null {
  const base = path.resolve(path.dirname(fromFile), spec);
  for (const candidate of [base.replace(/\.js$/, '.ts'), base + '.ts', path.join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** Every relative import edge of the TypeScript files under `dirs` (repository-relative). */
export function importEdges(dirs: string[] = ['src', 'workers', 'jobs']): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of dirs.flatMap((d) => listTs(path.join(ROOT, d)))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, false);
    const add = (spec: string, typeOnly: boolean) => {
      if (!spec.startsWith('.')) return;
      const to = resolve(file, spec);
      if (to) edges.push({ from: path.relative(ROOT, file), to: path.relative(ROOT, to), typeOnly });
    };
    const visit = (node: ts.Node) => {
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        const typeOnly = ts.isImportDeclaration(node) ? Boolean(node.importClause?.isTypeOnly) : node.isTypeOnly;
        add(node.moduleSpecifier.text, typeOnly);
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
        add(node.arguments[0].text, false);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return edges;
}

/**
 * The unit a file belongs to: its folder for files in a folder below src/ (`src/index`), the
 * file itself for the entry files directly in src/ (`src/server.ts`), `workers`, `jobs`.
 */
export function unitOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'src') return parts.length > 2 ? `src/${parts[1]}` : file;
  return parts[0]!;
}

/** Cycles in a directed graph given as adjacency sets (each cycle once, as a node list). */
export function findCycles(graph: Map<string, Set<string>>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const seen = new Set<string>();
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') {
        const cycle = stack.slice(stack.indexOf(next));
        const key = [...cycle].sort().join(' ');
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...cycle, next]);
        }
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

/** Folder-level graph: unit → units it imports, with the number of imports per pair. */
export function unitGraph(edges: ImportEdge[]): Map<string, Map<string, number>> {
  const graph = new Map<string, Map<string, number>>();
  for (const e of edges) {
    const a = unitOf(e.from);
    const b = unitOf(e.to);
    if (a === b) continue;
    const row = graph.get(a) ?? new Map<string, number>();
    row.set(b, (row.get(b) ?? 0) + 1);
    graph.set(a, row);
  }
  return graph;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const graph = unitGraph(importEdges());
  for (const unit of [...graph.keys()].sort()) {
    const row = graph.get(unit)!;
    console.log(`${unit} -> ${[...row.keys()].sort().map((u) => `${u} (${row.get(u)})`).join(', ')}`);
  }
}
