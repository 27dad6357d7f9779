/**
 * A small shop-like project for the browser tests: pages in two content groups and without
 * one, a shown data point `price` (sortable), a multiple-choice filter `fid#1` (Color) and a
 * range filter `fid#2` (Price). Links point at `origin` (the host-page server), so a selected
 * result navigates somewhere real.
 */
import { api, type TestServer } from '../helpers/server.js';

export interface Doc {
  path: string;
  title: string;
  content: string;
  group: string;
  color?: string;
  price?: number;
  /** Path of the result image on the host-page server. */
  image?: string;
}

export const DOCS: Doc[] = [
  { path: '/recipes/apple-tart', title: 'Apple tart', content: 'A crisp apple tart with butter pastry and red apples.', group: 'Recipes', color: 'red', price: 12, image: '/img/tart.svg' },
  { path: '/recipes/apple-pie', title: 'Apple pie', content: 'Classic apple pie with green apples and cinnamon.', group: 'Recipes', color: 'green', price: 8 },
  { path: '/recipes/apple-crumble', title: 'Apple crumble', content: 'Apple crumble with oats, red apples and brown sugar.', group: 'Recipes', color: 'red', price: 5 },
  { path: '/recipes/apple-sauce', title: 'Apple sauce', content: 'Smooth apple sauce from yellow apples.', group: 'Recipes', color: 'yellow', price: 3 },
  { path: '/recipes/apple-cake', title: 'Apple cake', content: 'Moist apple cake with green apples.', group: 'Recipes', color: 'green', price: 15 },
  { path: '/recipes/pear-cake', title: 'Pear cake', content: 'A cake with pears and almonds.', group: 'Recipes', color: 'green', price: 14 },
  { path: '/blog/apple-harvest', title: 'The apple harvest', content: 'Notes from the apple harvest in our orchard this autumn.', group: 'Blog', color: 'red' },
  { path: '/blog/apple-varieties', title: 'Apple varieties we grow', content: 'Red, green and yellow apple varieties explained.', group: 'Blog', color: 'yellow' },
  { path: '/blog/pear-season', title: 'Pear season', content: 'Pears are ripe in September.', group: 'Blog' },
  { path: '/about', title: 'About our apple orchard', content: 'A family orchard growing apples and pears since 1950.', group: '' },
];

/** The image of the tart (serve it at `/img/tart.svg` of the host-page server). */
export const TART_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="80" height="80"><circle cx="40" cy="40" r="36" fill="#c0392b"/></svg>';

/** Defines the filters and the data point, then indexes {@link DOCS} (searchable on return). */
export async function seedShop(srv: TestServer, origin: string, site = 'default', token = srv.token): Promise<void> {
  const settings = await api(srv.url, `/admin/projects/${site}/settings`, {
    method: 'PATCH',
    token: srv.masterKey,
    json: {
      filters: [
        { id: 'fid#1', name: 'Color', type: 'multiple' },
        { id: 'fid#2', name: 'Price', type: 'range' },
      ],
      dataPoints: [{ key: 'price', meta: 'price', type: 'number', show: true, sortable: true, searchable: false }],
    },
  });
  if (settings.status !== 200) throw new Error(`settings: ${settings.text}`);
  const docs = DOCS.map((d) => ({
    url: origin + d.path,
    title: d.title,
    content: d.content,
    appendPageContent: false,
    contentGroup: d.group,
    imageUrl: d.image ? origin + d.image : '',
    dataPoints: d.price === undefined ? [] : [{ key: 'price', value: String(d.price), show: true }],
    filters: [...(d.color ? [{ key: 'fid#1', value: [d.color] }] : []), ...(d.price === undefined ? [] : [{ key: 'fid#2', value: d.price }])],
  }));
  const r = await api(srv.url, '/sites/pagesJson?refresh=true', { method: 'POST', token, json: docs });
  if (r.status !== 200) throw new Error(`index: ${r.text}`);
}
