import type { MiddlewareHandler } from 'hono';
import type { Context } from '../../src/context.js';
import type { AppEnv } from '../env.js';
import type { AppMetrics } from '../metrics.js';
import { rateHeadersOnEdgeRefusal } from './keyed-refusals.js';
import { logRequest, requestIdOf } from './request-log.js';

/**
 * What every request goes through at the edge, in one middleware: its id, then, once it is
 * answered, the rate headers of a keyed refusal that came before any route, the metrics and the
 * traffic meter, and the access log. One layer instead of three: each layer of hono's chain costs
 * about a microsecond a request (bench:middleware), as much as the work these three do.
 */
export function edge(ctx: Context, metrics: AppMetrics): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const requestId = requestIdOf(c);
    await next();
    await rateHeadersOnEdgeRefusal(ctx, c);
    metrics.observe(c, started);
    logRequest(ctx.log, c, started, requestId);
  };
}
