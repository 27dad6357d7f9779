/**
 * One project's share of a query-log hand-over, in columns: what the main thread builds from its
 * queue (src/analytics/service.ts), sends to the query-log writer thread (src/analytics/writer.ts,
 * writer-thread.ts) and what {@link LogInserter} (src/analytics/site-log.ts) writes, on either
 * thread.
 *
 * Why columns instead of one object per row: a batch holds up to a second of logged searches
 * (10,000 at 10k req/s). As row objects they were built on the main thread, serialised to JSON,
 * parsed back into objects in the thread, and kept on the main thread until the thread's answer
 * (so they outlived a scavenge and were promoted). Here a search is a few numbers appended to
 * typed arrays (memory outside the V8 heap, copied to the thread as bytes) plus an index into
 * the batch's distinct queries and visitors, which are sent as one joined string each; the
 * suggestion aggregates are counted per distinct query instead of per row. Events (`POST
 * /sites/queries/log`, rare) stay row objects.
 *
 * Invariant: a query or visitor hash never contains `\n` (normalised queries have whitespace
 * collapsed to single spaces; hashes are hex), so the joined strings split back exactly.
 */
import { dayOf } from './normalize.js';

/** A search as the writer stores it (already normalised and anonymised). */
export interface SearchRow {
  kind: 'search';
  at: number;
  query: string;
  results: number;
  /** JSON text of the applied filters, or null. */
  filters: string | null;
  sort: string | null;
  visitor: string;
}

/** A suggestion/result event as the writer stores it. */
export interface EventRow {
  kind: 'event';
  at: number;
  query: string;
  action: 'search' | 'select' | 'abandon';
  timeToAction: number | null;
  link: string | null;
  position: number | null;
  visitor: string;
}

/** A {@link LogBatch} as posted to the writer thread (structured clone copies the typed arrays). */
export interface WireBatch {
  length: number;
  queries: string;
  queryCount: number;
  visitors: string;
  visitorCount: number;
  query: Int32Array;
  visitor: Int32Array;
  at: Float64Array;
  results: Int32Array;
  extras: Array<[row: number, filters: string | null, sort: string | null]>;
  events: EventRow[];
}

/**
 * Counted searches of one distinct query (and, with days split, one UTC day): how many, and the
 * time and result count of the latest (ties in time: the later row).
 */
export type CountedGroup = (query: string, n: number, lastAt: number, lastResults: number) => void;

const INITIAL_ROWS = 256;

/**
 * Default {@link QueryDictionary} bound: typed forms plus normalised queries remembered per
 * project before the dictionary starts over (at the next batch).
 */
export const DEFAULT_MAX_DICTIONARY = 50_000;

/**
 * The queries of one project's logged searches from one hand-over to the next (main thread,
 * owned by src/analytics/service.ts): the form a visitor typed → the id of its normalised
 * query. Each {@link LogBatch} built on it maps an id to the index of that query in the
 * batch's own {@link LogBatch.queries} through two typed arrays (no Map, no string).
 *
 * Why: a batch holds a second of searches, and the same popular queries come back every
 * second. Interned per batch, each distinct query was normalised (a regular expression and a
 * lower-cased copy) and entered into two Maps again with every hand-over, and those strings and
 * Maps lived for the second until the hand-over, long enough to be promoted to the old
 * generation: in a profile of the bench server's logging rows that per-batch work
 * (`normaliseQuery` 0.64, `internQuery` 0.70 µs per logged request) was a fifth of the main
 * thread's logging code. Remembered here, a query typed before costs one Map lookup of the
 * request's string in any batch.
 *
 * Bounded: once it holds {@link maxEntries} typed forms and queries, {@link full} turns true
 * and the service starts a new dictionary with the project's next batch (batches already
 * built keep the old one: nothing they hold changes). Holds queries only (never an IP or user
 * agent); dropped with the project.
 */
export class QueryDictionary {
  /** Normalised queries by id. */
  readonly queries: string[] = [];
  private readonly byQuery = new Map<string, number>();
  private readonly byTyped = new Map<string, number>();
  /** Per id: the serial of the last batch that used it and its index in that batch. */
  private stamp = new Int32Array(INITIAL_ROWS);
  private local = new Int32Array(INITIAL_ROWS);
  private serials = 0;

  constructor(readonly maxEntries = DEFAULT_MAX_DICTIONARY) {}

  /** Whether the dictionary reached its bound (the next batch starts a new one). */
  get full(): boolean {
    return this.queries.length + this.byTyped.size >= this.maxEntries;
  }

  /** The id of the query typed as `typed` earlier, if it was remembered. */
  typed(typed: string): number | undefined {
    return this.byTyped.get(typed);
  }

  /** The id of normalised `query` (added when new); with `typed`, that form is remembered for {@link typed}. */
  intern(query: string, typed?: string): number {
    let id = this.byQuery.get(query);
    if (id === undefined) {
      id = this.queries.push(query) - 1;
      this.byQuery.set(query, id);
      if (id === this.stamp.length) {
        this.stamp = grown(this.stamp, id * 2);
        this.local = grown(this.local, id * 2);
      }
    }
    if (typed !== undefined) this.byTyped.set(typed, id);
    return id;
  }

  /** A new batch's serial (never 0, so a zeroed stamp matches no batch). */
  nextSerial(): number {
    return ++this.serials;
  }

  /** The index of query `id` in the batch with `serial`, or -1 when that batch does not hold it yet. */
  localOf(id: number, serial: number): number {
    return this.stamp[id] === serial ? this.local[id]! : -1;
  }

  /** Records that the batch with `serial` holds query `id` at `index`. */
  setLocal(id: number, serial: number, index: number): void {
    this.stamp[id] = serial;
    this.local[id] = index;
  }
}

/** See the module comment. Searches keep their order (ids are assigned in row order). */
export class LogBatch {
  /** Searches in the batch. */
  length = 0;
  /** Distinct normalised queries, first-seen order. */
  readonly queries: string[];
  /** Distinct visitor hashes, first-seen order. */
  readonly visitors: string[];
  /** Per search: index into {@link queries} / {@link visitors}, time (ms), result count. */
  query: Int32Array;
  visitor: Int32Array;
  at: Float64Array;
  results: Int32Array;
  /** Searches with filters or a sort (most have neither), ascending row. */
  readonly extras: Array<[row: number, filters: string | null, sort: string | null]>;
  /** Events, in order (their own table). */
  readonly events: EventRow[];
  /** Normalised query → index into {@link queries}, for batches without a dictionary. */
  private readonly queryIds = new Map<string, number>();
  private readonly visitorIds = new Map<string, number>();
  /** The visitor hash of the previous search and its index (one visitor's searches follow each other). */
  private lastVisitor = '';
  private lastVisitorIndex = -1;
  /** The project's dictionary this batch takes its queries from (main thread), and the batch's serial in it. */
  private readonly dictionary: QueryDictionary | null;
  private readonly serial: number;

  /**
   * A batch from its message form (`wire`, the writer thread), or an empty one; `dictionary`
   * (main thread, see {@link QueryDictionary}): {@link typedQuery} and {@link internQuery} go
   * through it, so queries typed in earlier batches are not normalised or interned again.
   */
  constructor(wire?: WireBatch, dictionary?: QueryDictionary) {
    this.dictionary = dictionary ?? null;
    this.serial = dictionary ? dictionary.nextSerial() : 0;
    if (wire) {
      this.length = wire.length;
      this.queries = wire.queryCount === 0 ? [] : wire.queries.split('\n');
      this.visitors = wire.visitorCount === 0 ? [] : wire.visitors.split('\n');
      this.query = wire.query;
      this.visitor = wire.visitor;
      this.at = wire.at;
      this.results = wire.results;
      this.extras = wire.extras;
      this.events = wire.events;
    } else {
      this.queries = [];
      this.visitors = [];
      this.query = new Int32Array(INITIAL_ROWS);
      this.visitor = new Int32Array(INITIAL_ROWS);
      this.at = new Float64Array(INITIAL_ROWS);
      this.results = new Int32Array(INITIAL_ROWS);
      this.extras = [];
      this.events = [];
    }
  }

  /** A batch of rows (tests, and callers that have rows). */
  static of(rows: Iterable<SearchRow | EventRow>): LogBatch {
    const b = new LogBatch();
    for (const r of rows) {
      if (r.kind === 'search') b.addSearch(r.at, r.query, r.results, r.filters, r.sort, r.visitor);
      else b.events.push(r);
    }
    return b;
  }

  /** Appends one search (`query` normalised, `visitor` hashed). Main thread. */
  addSearch(at: number, query: string, results: number, filters: string | null, sort: string | null, visitor: string): void {
    this.addSearchOf(at, this.internQuery(query), results, filters, sort, visitor);
  }

  /**
   * The index in {@link queries} of the query typed as `typed` (exactly as the request had it)
   * in a search added through {@link internQuery} of this batch or of an earlier batch on the
   * same dictionary (appended to {@link queries} when new to this batch: call it only for a
   * search about to be added); undefined when the form is not remembered, or the batch has no
   * dictionary. Main thread. Why: a typed form seen before costs one Map lookup of the request's
   * string instead of normalising it (a regular expression test and a lower-cased copy) and
   * looking the copy up again.
   */
  typedQuery(typed: string): number | undefined {
    const id = this.dictionary?.typed(typed);
    return id === undefined ? undefined : this.localQuery(id);
  }

  /**
   * The index of normalised `query` in {@link queries} (added when new); with `typed` and a
   * dictionary, the form the visitor typed it in (whose normalisation is `query`) is remembered
   * for {@link typedQuery}.
   */
  internQuery(query: string, typed?: string): number {
    if (this.dictionary !== null) return this.localQuery(this.dictionary.intern(query, typed));
    let q = this.queryIds.get(query);
    if (q === undefined) {
      q = this.queries.push(query) - 1;
      this.queryIds.set(query, q);
    }
    return q;
  }

  /** The index in {@link queries} of the dictionary's query `id` (appended on its first search in this batch). */
  private localQuery(id: number): number {
    const dictionary = this.dictionary!;
    let q = dictionary.localOf(id, this.serial);
    if (q < 0) {
      q = this.queries.push(dictionary.queries[id]!) - 1;
      dictionary.setLocal(id, this.serial, q);
    }
    return q;
  }

  /** Appends one search of the query at index `q` of {@link queries} (`visitor` hashed). Main thread. */
  addSearchOf(at: number, q: number, results: number, filters: string | null, sort: string | null, visitor: string): void {
    const i = this.length;
    if (i === this.at.length) this.grow();
    let v = this.lastVisitorIndex;
    if (visitor !== this.lastVisitor || v < 0) {
      v = this.visitorIds.get(visitor) ?? -1;
      if (v < 0) {
        v = this.visitors.push(visitor) - 1;
        this.visitorIds.set(visitor, v);
      }
      this.lastVisitor = visitor;
      this.lastVisitorIndex = v;
    }
    this.query[i] = q;
    this.visitor[i] = v;
    this.at[i] = at;
    this.results[i] = results;
    if (filters !== null || sort !== null) this.extras.push([i, filters, sort]);
    this.length = i + 1;
  }

  /** Whether the batch holds nothing. */
  get empty(): boolean {
    return this.length === 0 && this.events.length === 0;
  }

  /** Searches plus events. */
  get entries(): number {
    return this.length + this.events.length;
  }

  /**
   * Moves the first `n` entries (searches first, then events) into a new batch and keeps the
   * rest (the main-thread write path, which commits a few hundred entries per event-loop turn).
   */
  take(n: number): LogBatch {
    const head = new LogBatch();
    const searches = Math.min(n, this.length);
    let extra = 0;
    for (let i = 0; i < searches; i++) {
      let filters: string | null = null;
      let sort: string | null = null;
      if (extra < this.extras.length && this.extras[extra]![0] === i) [, filters, sort] = this.extras[extra++]!;
      head.addSearch(this.at[i]!, this.queries[this.query[i]!]!, this.results[i]!, filters, sort, this.visitors[this.visitor[i]!]!);
    }
    head.events.push(...this.events.splice(0, Math.max(0, n - searches)));
    // The rest: rows shifted down, extras renumbered (queries and visitors stay interned).
    const rest = this.length - searches;
    this.query.copyWithin(0, searches, this.length);
    this.visitor.copyWithin(0, searches, this.length);
    this.at.copyWithin(0, searches, this.length);
    this.results.copyWithin(0, searches, this.length);
    this.length = rest;
    const kept = this.extras.splice(extra).map(([row, f, so]): [number, string | null, string | null] => [row - searches, f, so]);
    this.extras.length = 0;
    this.extras.push(...kept);
    return head;
  }

  /** The message form (typed arrays cut to the rows; the clone copies them). */
  toWire(): WireBatch {
    const n = this.length;
    return {
      length: n,
      queries: this.queries.join('\n'),
      queryCount: this.queries.length,
      visitors: this.visitors.join('\n'),
      visitorCount: this.visitors.length,
      query: this.query.subarray(0, n),
      visitor: this.visitor.subarray(0, n),
      at: this.at.subarray(0, n),
      results: this.results.subarray(0, n),
      extras: this.extras,
      events: this.events,
    };
  }

  /**
   * Calls `fn` once per distinct query for its searches of UTC day `windowStartDay` or later
   * (the suggestion window), in first-seen order; with `splitDays`, once per distinct (query,
   * day) instead. Groups without such searches are skipped.
   */
  forEachCounted(windowStartDay: number, splitDays: boolean, fn: CountedGroup): void {
    const nq = this.queries.length;
    if (nq === 0) return;
    const n = new Int32Array(nq);
    const lastAt = new Float64Array(nq);
    const lastResults = new Int32Array(nq);
    // With splitDays: the day each query's open group counts (searches are nearly always of one
    // day; a batch across midnight closes a group when its query's day changes).
    const day = splitDays ? new Float64Array(nq) : null;
    for (let i = 0; i < this.length; i++) {
      const at = this.at[i]!;
      const d = dayOf(at);
      if (d < windowStartDay) continue;
      const q = this.query[i]!;
      if (day !== null && n[q]! > 0 && day[q] !== d) {
        fn(this.queries[q]!, n[q]!, lastAt[q]!, lastResults[q]!);
        n[q] = 0;
      }
      if (n[q] === 0 || at >= lastAt[q]!) {
        lastAt[q] = at;
        lastResults[q] = this.results[i]!;
      }
      if (day !== null) day[q] = d;
      n[q] = n[q]! + 1;
    }
    for (let q = 0; q < nq; q++) if (n[q]! > 0) fn(this.queries[q]!, n[q]!, lastAt[q]!, lastResults[q]!);
  }

  private grow(): void {
    const cap = this.at.length * 2;
    this.query = grown(this.query, cap);
    this.visitor = grown(this.visitor, cap);
    this.at = grown(this.at, cap);
    this.results = grown(this.results, cap);
  }
}

/** A copy of `a` at the start of a new zeroed array of the same type with `cap` elements. */
function grown<T extends Int32Array | Float64Array>(a: T, cap: number): T {
  const b = new (a.constructor as new (length: number) => T)(cap);
  b.set(a);
  return b;
}
