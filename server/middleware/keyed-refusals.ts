import type { Context as HonoContext } from 'hono';
import type { Context } from '../../src/context.js';
import { authenticateApiKey } from '../../src/domain/auth.js';
import { countRequest, rateHeaders } from '../../src/domain/rate-limits.js';
import { DrmError } from '../../src/errors.js';
import type { AppEnv } from '../env.js';
import { addToAnswer } from '../reply.js';
import { bearer } from '../origin.js';

/**
 * Keyed responses carry the X-RateLimit headers, but two refusals come before any route's key
 * check could count the request: a body over the edge's size limit (413) and a path no route
 * serves (404, the one answer hono gives without an error). When such a request carries a valid
 * key it is counted here, once, and its answer gets the headers; a missing or unknown key changes
 * nothing, the refusal stands as it was.
 */
export async function rateHeadersOnEdgeRefusal(ctx: Context, c: HonoContext<AppEnv>): Promise<void> {
  if (!mayNeedRateHeaders(c) || c.res.headers.has('X-RateLimit-Limit')) return;
  addToAnswer(c, await keyedRateHeaders(ctx, c));
}

/** Whether the answer is one of those two refusals (a cheap test, made before anything is awaited). */
export function mayNeedRateHeaders(c: HonoContext<AppEnv>): boolean {
  const unrouted = c.res.status === 404 && c.error === undefined;
  return unrouted || c.res.status === 413;
}

async function keyedRateHeaders(ctx: Context, c: HonoContext): Promise<Record<string, string>> {
  if (!bearer(c)) return {};
  try {
    return rateHeaders(await countRequest(ctx, await authenticateApiKey(ctx, bearer(c))));
  } catch (err) {
    // No valid key: nothing to count. Over the limit: the refusal stands, with the limit's headers.
    if (err instanceof DrmError && err.code === 'INVALID_API_KEY') return {};
    if (err instanceof DrmError && err.code === 'RATE_LIMIT_EXCEEDED') return err.headers;
    throw err;
  }
}
