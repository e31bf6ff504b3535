import type { Context } from '../context.js';
import { HOUR_MS } from '../clock.js';
import { DrmError } from '../errors.js';
import type { KeyAuth } from './auth.js';
import { DEFAULT_LIMITS, planFor } from './plans.js';

export interface RateState {
  limit: number;
  remaining: number;
  /** epoch seconds at which the window resets */
  reset: number;
}

export const hourlyLimitOf = (auth: KeyAuth): number =>
  auth.org.rateLimitPerHour ?? DEFAULT_LIMITS[planFor(auth.org.plan).name].perHour;

export const monthlyStreamLimitOf = (auth: Pick<KeyAuth, 'org'>): number =>
  auth.org.monthlyStreamLimit ?? DEFAULT_LIMITS[planFor(auth.org.plan).name].monthlyStreams;

export function rateHeaders(s: RateState): Record<string, string> {
  return setRateHeaders({}, s);
}

/** rateHeaders written into a record of headers already there (an answer's, on every keyed request). */
export function setRateHeaders(headers: Record<string, string>, s: RateState): Record<string, string> {
  headers['X-RateLimit-Limit'] = String(s.limit);
  headers['X-RateLimit-Remaining'] = String(s.remaining);
  headers['X-RateLimit-Reset'] = String(s.reset);
  return headers;
}

/**
 * Counts one keyed request in the fixed clock-hour window of its organization and, where the
 * key has its own limit, of its key. The state reported is the tighter of the two. Over the
 * limit gives RATE_LIMIT_EXCEEDED with the headers and Retry-After.
 *
 * The key's own window is counted first, and a request it refuses is not counted against the
 * organization: a key held back by its own limit must not use up the budget of the other keys.
 */
export async function countRequest(ctx: Context, auth: KeyAuth): Promise<RateState> {
  const keyLimit = auth.key.rateLimitPerHour;
  const keyState = keyLimit === null ? undefined : await countInWindow(ctx, `key:${auth.key.id}`, keyLimit);
  const orgState = await countInWindow(ctx, `org:${auth.org.id}`, hourlyLimitOf(auth));
  return keyState && keyState.remaining < orgState.remaining ? keyState : orgState;
}

/**
 * Counts one request in the current clock-hour window of a bucket (counters shared by every
 * server on the database); past the limit, RATE_LIMIT_EXCEEDED with the headers and Retry-After.
 */
export async function countInWindow(
  ctx: Context,
  bucket: string,
  limit: number,
  what = 'requests',
): Promise<RateState> {
  const now = ctx.clock.now();
  const windowStart = Math.floor(now / HOUR_MS) * HOUR_MS;
  const reset = (windowStart + HOUR_MS) / 1000;
  const used = await ctx.repos.rateCounters.hit(bucket, windowStart, limit);
  const state = { limit, remaining: Math.max(0, limit - used), reset };
  if (used > limit) {
    throw new DrmError('RATE_LIMIT_EXCEEDED', `rate limit of ${limit} ${what} per hour exceeded`, {
      headers: { ...rateHeaders(state), 'Retry-After': String(Math.max(1, Math.ceil(reset - now / 1000))) },
    });
  }
  return state;
}
