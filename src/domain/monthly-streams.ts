import { monthStart } from '../clock.js';
import type { Context } from '../context.js';
import { DrmError } from '../errors.js';
import type { KeyAuth } from './auth.js';
import { monthlyStreamLimitOf } from './rate-limits.js';

/** A stream counted against the organization's month; given back when its session is not made. */
export interface CountedStream {
  release(): Promise<void>;
}

/**
 * Counts one more stream in the organization's calendar month, or refuses it past the monthly
 * limit. A named counter per organization and month does it in one upsert (shared by the
 * requests of one turn), outside the session's
 * transaction: counting the month's sessions grew with them (a million sessions, a million index
 * entries read per new one), and a counter row held to the commit would queue every session of
 * the organization behind the one before. The first stream of a month here (a new month, or a
 * deployment upgraded mid-month) starts the counter from the sessions already stored.
 */
export async function countMonthlyStream(ctx: Context, auth: KeyAuth, now: number): Promise<CountedStream> {
  const since = monthStart(now);
  const name = `streams:${auth.org.id}:${since}`;
  let number = await ctx.repos.counters.nextFrom(name, 1);
  if (number === 1) {
    const stored = await ctx.repos.sessions.countSince(auth.org.id, since);
    if (stored > 0) number = await ctx.repos.counters.add(name, stored);
  }
  const counted: CountedStream = { release: () => ctx.repos.counters.add(name, -1).then(() => undefined) };
  const limit = monthlyStreamLimitOf(auth);
  if (number > limit) {
    await counted.release();
    throw new DrmError(
      'MONTHLY_STREAM_LIMIT_EXCEEDED',
      `the organization's limit of ${limit} streams this month is reached`,
    );
  }
  return counted;
}
