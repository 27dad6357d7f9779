/**
 * bench/README.md holds one current table per benchmark; each benchmark script rewrites its own
 * section (between `<!-- bench:<name> -->` and `<!-- /bench:<name> -->`) at the end of a run,
 * headed by the machine, the date and the commit it ran on. The text outside the markers (what a
 * benchmark measures, how to read its table) is written by hand and never touched. The history of
 * the figures is the git log of that file.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The file the benchmarks write their sections into. */
export const BENCH_README = path.join(ROOT, 'bench/README.md');

/** The start and end markers of section `name`. */
export function sectionMarkers(name: string): { start: string; end: string } {
  return { start: `<!-- bench:${name} -->`, end: `<!-- /bench:${name} -->` };
}

/**
 * `text` with the contents of section `name` replaced by `markdown` (the markers stay). A section
 * that is not there yet is appended at the end, markers included, so a new benchmark needs no
 * hand edit to appear. Pure.
 *
 * @example replaceSectionText('a\n<!-- bench:x -->\nold\n<!-- /bench:x -->\n', 'x', 'new')
 * // 'a\n<!-- bench:x -->\nnew\n<!-- /bench:x -->\n'
 */
export function replaceSectionText(text: string, name: string, markdown: string): string {
  const { start, end } = sectionMarkers(name);
  const body = `${start}\n${markdown.trim()}\n${end}`;
  const from = text.indexOf(start);
  const to = from < 0 ? -1 : text.indexOf(end, from + start.length);
  if (from < 0 || to < 0) return `${text.replace(/\s*$/, '')}\n\n${body}\n`;
  return text.slice(0, from) + body + text.slice(to + end.length);
}

/** Replaces section `name` of `file` with `markdown` (see {@link replaceSectionText}). */
export function replaceSection(file: string, name: string, markdown: string): void {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  writeFileSync(file, replaceSectionText(text, name, markdown));
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/**
 * The commit the code under test is at: the short hash, plus a note when the sources differ from
 * it (a run from a working tree is not a run of that commit). bench/README.md itself is ignored,
 * since every benchmark rewrites it.
 */
export function commitOf(): string {
  const sha = git(['rev-parse', '--short', 'HEAD']) || 'unknown commit';
  const dirty = git(['status', '--porcelain', '--untracked-files=no', '--', 'src', 'workers', 'jobs', 'bench', 'bin', 'package.json', ':!bench/README.md']);
  return dirty ? `${sha} + uncommitted changes` : sha;
}

/** One line naming the machine: CPUs, memory, OS, Node, and the load when the run ended. */
export function machineOf(): string {
  const cpus = os.cpus();
  const model = (cpus[0]?.model ?? 'unknown CPU').replace(/\s+/g, ' ').trim();
  const gib = (os.totalmem() / 1024 ** 3).toFixed(1);
  const load = os.loadavg().map((x) => x.toFixed(1)).join(' ');
  return `${cpus.length} × ${model}, ${gib} GiB, ${os.type()} ${os.release()}, Node ${process.version}; load average at the end ${load}`;
}

/** The header line of a section: date (UTC), commit, machine. */
export function runHeader(now = new Date()): string {
  const date = now.toISOString().replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC');
  return `_Run ${date} · commit ${commitOf()} · ${machineOf()}_`;
}

/**
 * Writes a benchmark's result into its section of bench/README.md, under {@link runHeader}.
 * Diagnostic runs (`partial`: a subset of the rows, other corpus sizes) and `BENCH_REPORT=0` leave
 * the file alone, so the section always shows a full run.
 *
 * @example writeBenchSection('search', lines.join('\n'), { partial: process.env.BENCH_PEERS === '0' })
 */
export function writeBenchSection(name: string, markdown: string, opts: { partial?: boolean } = {}): void {
  if (process.env.BENCH_REPORT === '0' || opts.partial) {
    process.stderr.write(`bench/README.md not updated (${opts.partial ? 'a diagnostic run' : 'BENCH_REPORT=0'})\n`);
    return;
  }
  replaceSection(BENCH_README, name, `${runHeader()}\n\n${markdown}`);
  process.stderr.write(`bench/README.md: section "${name}" updated\n`);
}

/** A markdown table from a header row and body rows (`|` inside cells escaped). */
export function markdownTable(header: string[], rows: string[][], align: Array<'l' | 'r'> = []): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const sep = header.map((_, i) => (align[i] === 'r' ? '---:' : '---'));
  return [header, sep, ...rows].map((r, i) => `| ${(i === 1 ? r : r.map(cell)).join(' | ')} |`).join('\n');
}

/**
 * The median of `xs` (the mean of the middle two for an even count; NaN for none).
 *
 * @example median([3, 1, 2]) // 2
 */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
