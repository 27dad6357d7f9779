/** Public surface of the query log (SPEC §6 query suggestions, §8 query log and reports). */
export { QueryLogService } from './service.js';
export type {
  QueryLogOptions,
  SearchLogEntry,
  QueryEventEntry,
  QuerySuggestionOptions,
  ReportRange,
  ForwardedLogEntry,
} from './service.js';
export { QueryLogOutbox } from './outbox.js';
export type { OutboxOptions } from './outbox.js';
export { parseQueryEvent, QUERY_EVENT_ACTIONS, QueryEventInput } from './events.js';
export type { QueryEvent, QueryEventAction } from './events.js';
export type { QuerySuggestion } from './suggestions.js';
export { SuggestionIndex } from './suggestions.js';
export { INTERVALS, bucketCount, defaultInterval } from './timechart.js';
export type { Interval, Timechart, TimechartBucket, TopQuery, NoResultQuery } from './timechart.js';
export type { RollupResult } from './rollup.js';
export { normaliseQuery } from './normalize.js';
