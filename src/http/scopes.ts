/**
 * Which key scope each route needs (the one table `requireProject` and `requireAdmin` consult).
 * A route that takes a project key but is missing here needs `admin`, so forgetting an entry
 * never widens what a scoped key may do. Public routes need no key and are listed for the
 * `search` scope only to document it; routes only the master key may use are not listed.
 */
import type { KeyScope } from '../projects/index.js';

/** `METHOD /route/:pattern` → the scope a scoped key needs. */
export const ROUTE_SCOPES: Readonly<Record<string, KeyScope>> = {
  'GET /sites': 'search',
  'GET /sites/suggest': 'search',
  'GET /sites/similar': 'search',
  'POST /sites/queries/log': 'search',

  'POST /sites/pageJson': 'index',
  'POST /sites/pagesJson': 'index',
  'DELETE /index/documents': 'index',
  'POST /index/documents': 'index',
  'POST /index/replace': 'index',
  'POST /index/replace/commit': 'index',
  'DELETE /index/replace': 'index',
  'POST /sites/crawl': 'index',
  'POST /sites/sitemap': 'index',
  'GET /tasks/:taskId': 'index',
  'GET /tasks': 'index',
  'POST /tasks': 'index',
  'PATCH /tasks/:taskId': 'index',

  'GET /sites/indexStatus': 'reports',
  'GET /sites/indexedContent': 'reports',
  'GET /sites/tasks': 'reports',
  'GET /sites/queries/timechart': 'reports',
  'GET /sites/queries/top': 'reports',
  'GET /sites/queries/noResults': 'reports',

  'GET /admin/projects/:siteId/settings': 'settings',
  'PUT /admin/projects/:siteId/settings': 'settings',
  'PATCH /admin/projects/:siteId/settings': 'settings',

  'POST /admin/projects/:siteId/keys': 'admin',
  'GET /admin/projects/:siteId/keys': 'admin',
  'PATCH /admin/projects/:siteId/keys/:id': 'admin',
  'DELETE /admin/projects/:siteId/keys/:id': 'admin',
};

/** Routes whose project-key requests are limited per key (SITESIFT_RATE_INDEX_*). */
export const INDEXING_ROUTES: ReadonlySet<string> = new Set(
  Object.entries(ROUTE_SCOPES)
    .filter(([route, scope]) => scope === 'index' && !route.startsWith('GET '))
    .map(([route]) => route),
);

/** The scope `METHOD route` needs (HEAD counts as GET); `admin` for a route not in the table. */
export function scopeFor(method: string, route: string): KeyScope {
  const m = method === 'HEAD' ? 'GET' : method;
  return ROUTE_SCOPES[`${m} ${route}`] ?? 'admin';
}
