import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../../src/log.js';

/** One line per request: method, path (never the query, which carries session capabilities), status, time. */
export function requestLog(log: Logger): MiddlewareHandler {
  return async (c, next) => {
    const start = performance.now();
    await next();
    log.debug('request', {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - start) * 10) / 10,
    });
  };
}
