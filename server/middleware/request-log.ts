import { randomUUID } from 'node:crypto';
import type { Context as HonoContext } from 'hono';
import type { Logger } from '../../src/log.js';
import type { AppEnv } from '../env.js';
import { answerHeaders } from '../reply.js';
import { headerOf } from '../request-headers.js';

/** A caller's own request id is kept when it is a plain token (a proxy's); anything else gets a new one. */
const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The request's id, sent back as X-Request-Id so that a user's report can be found in the log. A
 * new one is a random UUID: a counter would be cheaper, but would tell any client how many
 * requests the server answers.
 */
export function requestIdOf(c: HonoContext<AppEnv>): string {
  const given = headerOf(c, 'x-request-id');
  const requestId = given && SAFE_ID.test(given) ? given : randomUUID();
  answerHeaders(c)['X-Request-Id'] = requestId;
  return requestId;
}

/** The matched route pattern, which names no id; 'unmatched' when no route took the request. */
export function routeOf(c: HonoContext): string {
  const route = c.req.routePath;
  return route === '/*' ? 'unmatched' : route;
}

/**
 * The access log: one line per request at info level with method, the matched route pattern (never
 * the path's ids nor the query, which carries session capabilities; never a key), status, duration
 * and the request id.
 */
export function logRequest(log: Logger, c: HonoContext, route: string, started: number, requestId: string): void {
  if (!log.enabled('info')) return;
  log.info('request', {
    method: c.req.method,
    route,
    status: c.res.status,
    ms: Math.round((performance.now() - started) * 10) / 10,
    requestId,
  });
}
