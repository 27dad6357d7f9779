/**
 * Schemas shared by several route modules: query parameters read the same way on several
 * routes, and answers several routes return (a crawl task). Route-specific schemas live in
 * their route module, payload schemas in the folder that owns the payload (settings in
 * src/projects, page documents in src/ingest).
 */
import { Type } from '@sinclair/typebox';
import { DOCUMENT_TYPES } from '../core/index.js';

/** A boolean query parameter: `true|false|1|0`, any case. */
export function BoolParam(dflt: boolean, description: string) {
  return Type.Boolean({ default: dflt, description: `${description} (\`true\`, \`false\`, \`1\` or \`0\`, any case)` });
}

/** An integer query parameter within `[minimum, maximum]`. */
export function IntParam(opts: { minimum: number; maximum?: number; default?: number; description: string }) {
  return Type.Integer(opts);
}

/** The project key as a query parameter (or `Authorization: Bearer`). */
export const TokenParam = Type.String({ description: 'Project API key (or send it as `Authorization: Bearer`).' });

/** The public `site` parameter: a project's siteId. */
export const SiteParam = Type.String({ minLength: 1, description: "The project's siteId." });

/** An ISO 8601 time. */
export const IsoTime = Type.String({ format: 'date-time' });

/** A document type (`HTML`, `PDF`, …). */
export const DocumentTypeSchema = Type.Union(DOCUMENT_TYPES.map((t) => Type.Literal(t)));

/** A crawl task as `GET /tasks/{taskId}` and the crawl routes answer it. */
export const TaskProps = {
  taskId: Type.String({ pattern: '^t_[0-9a-f]{20}$' }),
  type: Type.Union(['url', 'append', 'page', 'crawl', 'sitemap', 'reindex'].map((t) => Type.Literal(t))),
  state: Type.Union(['queued', 'running', 'done', 'failed'].map((t) => Type.Literal(t))),
  url: Type.Optional(Type.String()),
  indexStatus: Type.Optional(Type.Integer({ description: 'The page\'s index status code (docs/API.md#index-status-codes).' })),
  message: Type.Optional(Type.String()),
  createdAt: IsoTime,
  finishedAt: Type.Optional(IsoTime),
  pagesQueued: Type.Optional(Type.Integer({ minimum: 0 })),
  progress: Type.Optional(
    Type.Object(
      {
        found: Type.Integer({ minimum: 0 }),
        fetched: Type.Integer({ minimum: 0 }),
        indexed: Type.Integer({ minimum: 0 }),
        skipped: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'Pages finished with another index status, by status.' }),
        failed: Type.Integer({ minimum: 0 }),
      },
      { description: 'How far the task got (every task but the pages of a run).' },
    ),
  ),
};
