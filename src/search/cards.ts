/**
 * Result cards of this thread, all segments together, in a byte-bounded cache (CLOCK: about
 * LRU) in front of the SQLite read: top results repeat across queries. Each card also keeps
 * its text's word runs for snippets (see `snippet()`'s memo) and, once asked for, its folded
 * title and content (the contiguity check of queries in scripts without spaces, engine.ts).
 * Segments are immutable, so a card never goes stale; a reader's cards leave the cache when it
 * closes.
 */
import { engineCacheBudget, engineCacheUsed, type ResultCard } from '../index/index.js';
import { fold } from '../text/index.js';
import type { Hit } from './score.js';

interface CardEntry {
  card: ResultCard;
  bytes: number;
  /** Second-chance bit (CLOCK eviction: a hit never reorders a Map). */
  used: boolean;
  owner: Map<number, CardEntry>;
  key: number;
  /** fold(card.title) and fold(card.content), once asked for. */
  folded?: { title: string; content: string };
}
const cardMaps = new WeakMap<object, Map<number, CardEntry>>();
const cardClock = new Set<CardEntry>();

function entryOf(h: Hit, withContent: boolean): CardEntry {
  let m = cardMaps.get(h.seg.reader);
  if (!m) {
    const cards = new Map<number, CardEntry>();
    cardMaps.set(h.seg.reader, (m = cards));
    h.seg.reader.onClose(() => {
      for (const e of cards.values()) {
        cardClock.delete(e);
        engineCacheUsed.cards -= e.bytes;
      }
      cards.clear();
    });
  }
  const key = 2 * h.id + (withContent ? 1 : 0);
  const e = m.get(key);
  if (e) {
    e.used = true;
    return e;
  }
  const card = h.seg.reader.card(h.id, withContent);
  // Strings at up to two bytes per character; the content's word runs (12 bytes per run of
  // about 6 characters) and their index by hash add about as much again.
  const bytes = 2 * (card.title.length + card.url.length + card.description.length) + 5 * card.content.length + 512;
  const entry: CardEntry = { card, bytes, used: false, owner: m, key };
  m.set(key, entry);
  cardClock.add(entry);
  charge(bytes);
  return entry;
}

/** Adds `bytes` to the cards' use and evicts down to the budget when over it. */
function charge(bytes: number): void {
  engineCacheUsed.cards += bytes;
  // Budget per thread: src/index/budgets.ts (~110 MB by this estimate for the top 10 of the
  // 799 corpus queries at ~100k pages).
  if (engineCacheUsed.cards > engineCacheBudget.cards) {
    // Evict in batches down to 7/8 of the budget; recently used cards get a second chance.
    for (const x of cardClock) {
      if (engineCacheUsed.cards <= engineCacheBudget.cards - engineCacheBudget.cards / 8) break;
      cardClock.delete(x);
      if (x.used) {
        x.used = false;
        cardClock.add(x);
        continue;
      }
      x.owner.delete(x.key);
      engineCacheUsed.cards -= x.bytes;
    }
  }
}

/**
 * The stored fields of a hit (the content, up to the card's limit, only when `withContent`).
 *
 * @example const card = cardOf(hit, true); card.title;
 */
export function cardOf(h: Hit, withContent: boolean): ResultCard {
  return entryOf(h, withContent).card;
}

/**
 * fold() of a hit's title and (when `withContent`; else '') card content, kept with the card:
 * a query in a script without spaces checks the same top pages' texts again and again.
 *
 * @example foldedCard(hit, false).title.includes('管理')
 */
export function foldedCard(h: Hit, withContent: boolean): { title: string; content: string } {
  const e = entryOf(h, withContent);
  if (e.folded) return e.folded;
  // A folded text equal to its original is kept as the original string and costs nothing more.
  const same = (s: string): string => {
    const f = fold(s);
    return f === s ? s : f;
  };
  const title = same(e.card.title);
  const content = withContent ? same(e.card.content) : '';
  const folded = { title, content };
  // Kept only while the card is (an eviction since it was read leaves nothing to attach to).
  if (e.owner.get(e.key) === e) {
    e.folded = folded;
    const extra = (title === e.card.title ? 0 : 2 * title.length) + (content === e.card.content ? 0 : 2 * content.length) + 64;
    e.bytes += extra;
    charge(extra);
  }
  return folded;
}
