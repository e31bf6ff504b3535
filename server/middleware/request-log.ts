import { randomUUID } from 'node:crypto';
import type { Context as HonoContext } from 'hono';
import type { Logger } from '../../src/log.js';

/** A caller's own request id is kept when it is a plain token (a proxy's); anything else gets a new one. */
const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The request's id, sent back as X-Request-Id so that a user's report can be found in the log. */
export function requestIdOf(c: HonoContext): string {
  const given = c.req.header('x-request-id');
  const requestId = given && SAFE_ID.test(given) ? given : randomUUID();
  c.header('X-Request-Id', requestId);
  return requestId;
}

/**
 * The access log: one line per request at info level with method, the matched route pattern (never
 * the path's ids nor the query, which carries session capabilities; never a key), status, duration
 * and the request id.
 */
export function logRequest(log: Logger, c: HonoContext, started: number, requestId: string): void {
  // An error's answer is a new response, without the header set before. It is added to that
  // response's own headers: c.header() on a finished response would copy it, body stream and
  // all, which cost a third of a keyed request's time when every response went through it.
  if (!c.res.headers.has('X-Request-Id')) c.res.headers.set('X-Request-Id', requestId);
  log.info('request', {
    method: c.req.method,
    route: c.req.routePath === '/*' ? 'unmatched' : c.req.routePath,
    status: c.res.status,
    ms: Math.round((performance.now() - started) * 10) / 10,
    requestId,
  });
}
