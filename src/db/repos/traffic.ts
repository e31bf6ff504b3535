import { and, countDistinct, gte, lt, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';
import type * as operations from '../schema/operations.js';

export type TrafficRow = typeof operations.trafficBuckets.$inferSelect;

/** The totals of every server's buckets in a window. */
export interface TrafficTotals {
  requests: number;
  clientErrors: number;
  serverErrors: number;
  segmentBytes: number;
  sessionsStarted: number;
  /** servers that counted anything in the window */
  servers: number;
}

export function trafficRepo(x: Executor) {
  const t = x.s.trafficBuckets;
  return {
    /** Adds a server's counts into its buckets (a bucket flushed twice adds up, never overwrites). */
    async add(rows: TrafficRow[]): Promise<void> {
      if (rows.length === 0) return;
      await x.run((q) =>
        q
          .insert(t)
          .values(rows)
          .onConflictDoUpdate({
            target: [t.bucketStart, t.instanceId],
            set: {
              requests: sql`${t.requests} + excluded.requests`,
              clientErrors: sql`${t.clientErrors} + excluded.client_errors`,
              serverErrors: sql`${t.serverErrors} + excluded.server_errors`,
              segmentBytes: sql`${t.segmentBytes} + excluded.segment_bytes`,
              sessionsStarted: sql`${t.sessionsStarted} + excluded.sessions_started`,
            },
          }),
      );
    },

    /** Totals of the buckets that start in [from, to). */
    async totalsBetween(from: number, to: number): Promise<TrafficTotals> {
      const rows = await x.run((q) =>
        q
          .select({
            requests: sql<number | null>`sum(${t.requests})`,
            clientErrors: sql<number | null>`sum(${t.clientErrors})`,
            serverErrors: sql<number | null>`sum(${t.serverErrors})`,
            segmentBytes: sql<number | null>`sum(${t.segmentBytes})`,
            sessionsStarted: sql<number | null>`sum(${t.sessionsStarted})`,
            servers: countDistinct(t.instanceId),
          })
          .from(t)
          .where(and(gte(t.bucketStart, from), lt(t.bucketStart, to))),
      );
      const r = rows[0];
      return {
        requests: Number(r?.requests ?? 0),
        clientErrors: Number(r?.clientErrors ?? 0),
        serverErrors: Number(r?.serverErrors ?? 0),
        segmentBytes: Number(r?.segmentBytes ?? 0),
        sessionsStarted: Number(r?.sessionsStarted ?? 0),
        servers: Number(r?.servers ?? 0),
      };
    },

    async prune(before: number): Promise<void> {
      await x.run((q) => q.delete(t).where(lt(t.bucketStart, before)));
    },
  };
}
