import type { MiddlewareHandler } from 'hono';
import type { Context } from '../../src/context.js';
import { countOpenRequest, type OpenEndpoint } from '../../src/domain/open-limits.js';
import { setRateHeaders } from '../../src/domain/rate-limits.js';
import { clientInfo } from '../client.js';
import type { AppEnv } from '../env.js';
import { answerHeaders } from '../reply.js';

/** An open endpoint's per-client hourly limit, with its X-RateLimit headers on every answer. */
export function limitPerClient(ctx: Context, endpoint: OpenEndpoint): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const state = await countOpenRequest(ctx, endpoint, clientInfo(c, ctx).ip);
    if (state) setRateHeaders(answerHeaders(c), state);
    await next();
  };
}
