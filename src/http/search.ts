import type Router from '@koa/router';
import type { Services } from '../services.js';

/** Registers the search routes. (Placeholder until its owner fills it in.) */
export function register(_router: Router, _services: Services): void {}
