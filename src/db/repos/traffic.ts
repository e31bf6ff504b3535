import { and, countDistinct, desc, eq, gt, gte, lt, sql } from 'drizzle-orm';
import type { Executor, Q } from '../executor.js';
import type * as operations from '../schema/operations.js';

export type TrafficRow = typeof operations.trafficBuckets.$inferSelect;
export type SessionTrafficRow = typeof operations.sessionTraffic.$inferSelect;

/** The totals of every server's buckets in a window. */
export interface TrafficTotals {
  requests: number;
  clientErrors: number;
  serverErrors: number;
  segmentBytes: number;
  sessionsStarted: number;
  /** servers that wrote a bucket in the window (an idle server writes an empty one: a heartbeat) */
  servers: number;
}

/** A session that was sent segment bytes in a window, with what the live view names it by. */
export interface PlayingRow {
  sessionId: string;
  organizationId: string;
  organizationName: string;
  contentId: string;
  title: string;
  viewerId: string;
  externalViewerId: string;
  createdAt: number;
  /** segment bytes sent in the window */
  bytes: number;
}

export function trafficRepo(x: Executor) {
  const t = x.s.trafficBuckets;
  const st = x.s.sessionTraffic;
  return {
    /** Adds a server's counts into its buckets: a bucket flushed twice adds up, never overwrites. */
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

    /** Adds sessions' segment bytes into their buckets, adding up as the servers' counts do. */
    async addSessions(rows: SessionTrafficRow[]): Promise<void> {
      if (rows.length === 0) return;
      await x.run((q) =>
        q
          .insert(st)
          .values(rows)
          .onConflictDoUpdate({
            target: [st.bucketStart, st.sessionId],
            set: { segmentBytes: sql`${st.segmentBytes} + excluded.segment_bytes` },
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

    ...playingSessions(x),

    async prune(before: number): Promise<void> {
      await x.run((q) => q.delete(t).where(lt(t.bucketStart, before)));
      await x.run((q) => q.delete(st).where(lt(st.bucketStart, before)));
    },
  };
}

/**
 * The sessions playing: sent segment bytes in [from, to), neither ended nor expired at `now`.
 * The window's rows are grouped by session first, then each joined to its session by primary key.
 */
function playingSessions(x: Executor) {
  const { sessionTraffic: t, streamSessions: s, viewers: v, content: c, organizations: o } = x.s;
  const recent = (q: Q, from: number, to: number) =>
    q
      .select({
        sessionId: sql<string>`${t.sessionId}`.as('playing_session_id'),
        bytes: sql<number>`sum(${t.segmentBytes})`.as('playing_bytes'),
      })
      .from(t)
      .where(and(gte(t.bucketStart, from), lt(t.bucketStart, to)))
      .groupBy(t.sessionId)
      .as('playing');
  const live = (now: number) => and(eq(s.isActive, true), gt(s.expiresAt, now));
  return {
    async countPlaying(from: number, to: number, now: number): Promise<number> {
      const rows = await x.run((q) => {
        const p = recent(q, from, to);
        return q.select({ n: sql<number>`count(*)` }).from(p).innerJoin(s, eq(s.id, p.sessionId)).where(live(now));
      });
      return Number(rows[0]?.n ?? 0);
    },

    /** The newest `limit` of them, by when they started. */
    async newestPlaying(from: number, to: number, now: number, limit: number): Promise<PlayingRow[]> {
      const rows = await x.run((q) => {
        const p = recent(q, from, to);
        return q
          .select({
            sessionId: s.id,
            organizationId: s.organizationId,
            organizationName: o.name,
            contentId: s.contentId,
            title: c.title,
            viewerId: s.viewerId,
            externalViewerId: v.externalViewerId,
            createdAt: s.createdAt,
            bytes: p.bytes,
          })
          .from(p)
          .innerJoin(s, eq(s.id, p.sessionId))
          .innerJoin(v, eq(v.id, s.viewerId))
          .innerJoin(c, eq(c.id, s.contentId))
          .innerJoin(o, eq(o.id, s.organizationId))
          .where(live(now))
          .orderBy(desc(s.createdAt), s.id)
          .limit(limit);
      });
      return rows.map((r) => ({ ...r, createdAt: Number(r.createdAt), bytes: Number(r.bytes) }));
    },
  };
}
