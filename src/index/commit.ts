/**
 * Commit stage of the segment store: publishes what flushes and merges built, one commit at a
 * time, in call order. A commit computes the next generation's tombstones copy-on-write,
 * writes the manifest atomically, and only then installs the generation (generations.ts).
 *
 * Main thread; the manifest's file work (write, fsyncs, rename) runs on libuv's threadpool, so
 * the main thread keeps serving while a commit waits for the disk. Invariants:
 * - {@link CommitChain} is the only writer of `manifest.json` (writeManifest is called nowhere
 *   else), and its commits never overlap: each starts when the previous one has finished;
 * - a commit reads and changes in-memory state only while it holds the chain, and changes it
 *   only after the manifest is durable, so a failed manifest write changes nothing;
 * - `committedSeq` never moves back: every op with seq ≤ it is in a published segment (or
 *   provably unneeded: a delete of a URL no segment holds).
 */
import { writeManifest, MANIFEST_FORMAT, type Manifest } from './manifest.js';
import type { StoreContext } from './context.js';
import { decideFromScratch, sumLengths, type Generations, type SegState, type SegView, type Winner } from './generations.js';
import type { ManifestSegment } from './manifest.js';
import { NFIELDS } from './segment-format.js';
import { stallForever } from './tasks.js';

export class CommitChain {
  private readonly ctx: StoreContext;
  private readonly generations: Generations;
  /** The manifest's committedSeq: what the last commit (or the manifest read at open) published. */
  committedSeq = 0;
  /** The commit in flight, if any: a new commit starts when it has settled. */
  private chain: Promise<void> = Promise.resolve();

  constructor(ctx: StoreContext, generations: Generations) {
    this.ctx = ctx;
    this.generations = generations;
  }

  /**
   * Publishes `added` (a flush or merge result) and unpublishes `removed` (merge sources) as
   * one new generation, after every commit called before it. Resolves once the new manifest is
   * durable and the generation installed. `committedSeq` is what the caller has built up to; a
   * merge passes the value it saw before a flush's commit that finished first, and the larger
   * one is kept.
   *
   * @example
   * await commits.commit([built], [], upTo); // a flush
   * await commits.commit(merged ? [merged] : [], sources, commits.committedSeq); // a merge
   */
  commit(added: SegState[], removed: SegState[], committedSeq: number): Promise<void> {
    const p = this.chain.then(() => this.commitNow(added, removed, committedSeq));
    this.chain = p.catch(() => undefined);
    return p;
  }

  /**
   * Replaces the whole generation: the next one lists exactly `segments` (files already in
   * `segments/`, sealed and fsync'd), nothing of the current one, in one manifest commit after
   * every commit called before it. Readers pinned on older generations keep them until they
   * release. `committedSeq` must cover every op the caller considers published (the live
   * store's flushed ops and the new segments' seqs). On failure nothing changes and the new
   * segments are closed (their files stay for the caller or gc).
   *
   * @example
   * await commits.replaceAll(stagedMetas, Math.max(commits.committedSeq, stagedMaxSeq));
   */
  replaceAll(segments: ManifestSegment[], committedSeq: number): Promise<void> {
    const p = this.chain.then(() => this.replaceNow(segments, committedSeq));
    this.chain = p.catch(() => undefined);
    return p;
  }

  private async replaceNow(segments: ManifestSegment[], seqArg: number): Promise<void> {
    const ctx = this.ctx;
    if (ctx.closed) throw ctx.closedError();
    const committedSeq = Math.max(seqArg, this.committedSeq);
    const states: SegState[] = [];
    try {
      for (const meta of segments) states.push(this.generations.load(meta));
      const { winners, views } = decideFromScratch(states);
      const changes: Array<[string, Winner | null]> = [];
      for (const url of this.generations.published.keys()) if (!winners.has(url)) changes.push([url, null]);
      for (const entry of winners) changes.push(entry);
      const manifest: Manifest = {
        format: MANIFEST_FORMAT,
        generation: this.generations.current.number + 1,
        committedSeq,
        segments: states.map((st) => st.meta),
      };
      if (ctx.pauseIn === 'commit') stallForever('commit');
      await writeManifest(ctx.dir, manifest, ctx.pauseIn === 'manifest' ? () => stallForever('manifest') : undefined);
      if (ctx.closed) throw ctx.closedError('a commit');
      this.committedSeq = committedSeq;
      this.generations.install(manifest.generation, views, changes);
    } catch (err) {
      for (const st of states) this.generations.forget(st);
      throw err;
    }
  }

  private async commitNow(added: SegState[], removed: SegState[], seqArg: number): Promise<void> {
    const ctx = this.ctx;
    if (ctx.closed) throw ctx.closedError();
    const committedSeq = Math.max(seqArg, this.committedSeq);
    const prev = this.generations.current;
    const published = this.generations.published;
    const removedSet = new Set(removed);
    const views = new Map<SegState, SegView>();
    for (const v of prev.views) if (!removedSet.has(v.state)) views.set(v.state, { ...v });
    const copied = new Set<SegState>();
    const kill = (state: SegState, docId: number) => {
      const v = views.get(state);
      if (!v) return;
      if (!copied.has(state)) {
        // Copy-on-write: generations still pinned keep seeing the old bitmap and sums.
        v.dead = v.dead.slice();
        v.liveLengths = v.liveLengths.slice();
        copied.add(state);
      }
      if (v.dead[docId]) return;
      v.dead[docId] = 1;
      v.liveRows--;
      if (state.statuses[docId] === 200) {
        v.liveCount--;
        for (let f = 0; f < NFIELDS; f++) v.liveLengths[f]! -= state.lengths[docId * NFIELDS + f]!;
      }
    };
    const changes: Array<[string, Winner | null]> = [];
    // Winners decided in this commit (several added segments of one flush see each other's).
    // One added segment (every merge, most flushes) needs none: it holds at most one row per
    // URL, so its rows never meet each other, and its delete markers look up its own row in
    // the file; the rows skip a map lookup and insert each (at ~100k rows about half the time
    // this commit held the event loop).
    const single = added.length === 1;
    const decided = new Map<string, Winner>();
    for (const seg of added) {
      const n = seg.urls.length;
      const view: SegView = { state: seg, dead: new Uint8Array(n), liveRows: 0, liveCount: 0, liveLengths: [] };
      views.set(seg, view);
      copied.add(seg);
      const repointOrWin = (url: string, seq: number, docId: number): boolean => {
        const w = (single ? undefined : decided.get(url)) ?? published.get(url);
        // A newer op wins; a merge copy of the winning row (same seq) takes over from its source.
        const wins = !w || w.seq < seq || (w.seq === seq && removedSet.has(w.state));
        if (!wins) return false;
        if (w && w.seq < seq && w.docId >= 0) kill(w.state, w.docId);
        const win = { seq, state: seg, docId };
        if (!single) decided.set(url, win);
        changes.push([url, win]);
        return true;
      };
      for (let i = 0; i < n; i++) if (!repointOrWin(seg.urls[i]!, seg.seqs[i]!, i)) view.dead[i] = 1;
      for (const d of seg.deletes) {
        // With one added segment the map holds nothing: its own row of the marker's URL, if
        // that row won, is found through the file's URL index instead.
        const own = single ? seg.reader.idOf(d.url) : null;
        if (own !== null && !view.dead[own]) {
          if (seg.seqs[own]! >= d.seq) continue;
          view.dead[own] = 1;
        }
        repointOrWin(d.url, d.seq, -1);
      }
    }
    // After every added segment is placed: a later one may have killed rows of an earlier one.
    for (const seg of added) {
      const view = views.get(seg)!;
      Object.assign(view, sumLengths(seg, view.dead));
    }
    // Delete markers a merge dropped (no older row left anywhere): the URL leaves `published`.
    const addedUrls = new Set(added.flatMap((seg) => seg.deletes.map((d) => d.url)));
    for (const s of removed) {
      for (const d of s.deletes) {
        const w = published.get(d.url);
        if (w && w.state === s && w.docId < 0 && !addedUrls.has(d.url)) changes.push([d.url, null]);
      }
    }
    const nextViews = [...views.values()];
    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      generation: prev.number + 1,
      committedSeq,
      segments: nextViews.map((v) => v.state.meta),
    };
    if (ctx.pauseIn === 'commit' && added.length > 0) stallForever('commit');
    await writeManifest(ctx.dir, manifest, ctx.pauseIn === 'manifest' ? () => stallForever('manifest') : undefined);
    // Closed meanwhile: the manifest is durable (the next open reads it), but the readers the
    // new generation would use are closed.
    if (ctx.closed) throw ctx.closedError('a commit');
    this.committedSeq = committedSeq;
    this.generations.install(manifest.generation, nextViews, changes);
  }
}
