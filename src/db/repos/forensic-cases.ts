import { and, count, desc, eq, getTableColumns, gt, isNotNull, isNull, lte, ne, or, sql } from 'drizzle-orm';
import { type Executor, skippingLocked } from '../executor.js';
import type * as tables from '../schema/tables.js';

export type { CaseStatus } from '../schema/tables.js';

export type CaseRow = typeof tables.forensicCases.$inferSelect;

export type CaseOutcome = Pick<
  CaseRow,
  | 'status'
  | 'failureReason'
  | 'classification'
  | 'binaryId'
  | 'supportedBits'
  | 'matchedViewerId'
  | 'matchedSessionId'
  | 'report'
  | 'leakFrames'
  | 'completedAt'
>;

/**
 * A marked session as a candidate of its content's leak analyses: its viewer, and the viewer's
 * bits as a number (base 2, character 0 the highest bit), or, on a session an older server made
 * without them, the viewer's binaryId.
 */
export interface CandidateRow {
  viewerId: string;
  bits: number | null;
  binaryId: string | null;
}

/** The cases and the queries a leak analysis asks about the content's viewers and sessions. */
export function forensicCasesRepo(x: Executor) {
  return { ...caseRows(x), ...workerWrites(x), ...leakEvidence(x), ...keptLeaks(x) };
}

/** The case rows: stored, leased by the analysis queue, finished, listed. */
function caseRows(x: Executor) {
  const t = x.s.forensicCases;
  return {
    ...caseEnds(x),
    /** How many rows are in each status (metrics gauges). */
    async countByStatus(): Promise<Record<string, number>> {
      const rows = await x.run((q) => q.select({ status: t.status, n: count() }).from(t).groupBy(t.status));
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    },

    insert: (row: CaseRow) => x.run((q) => q.insert(t).values(row)),

    async find(id: string): Promise<CaseRow | undefined> {
      const rows = await x.run((q) => q.select().from(t).where(eq(t.id, id)).limit(1));
      return rows[0] as CaseRow | undefined;
    },

    /**
     * Leases the oldest waiting case whose lease is free (never taken, or run out because the
     * process that held it died), in one statement whose pick other workers skip on Postgres
     * (FOR UPDATE SKIP LOCKED), so two servers or workers never both take it; `attempts` counts
     * the takes, to give up on a case that kills its worker every time.
     */
    async claimNext(now: number, leaseUntil: number, by: string): Promise<CaseRow | undefined> {
      const waiting = and(eq(t.status, 'processing'), or(isNull(t.leaseUntil), lte(t.leaseUntil, now)));
      const rows = await x.run((q) => {
        const next = skippingLocked(
          x,
          q.select({ id: t.id }).from(t).where(waiting).orderBy(t.createdAt, t.id).limit(1),
        );
        return q
          .update(t)
          .set({ leaseUntil, leasedBy: by, attempts: sql`${t.attempts} + 1` })
          .where(and(eq(t.id, sql`(${next})`), waiting))
          .returning();
      });
      return rows[0] as CaseRow | undefined;
    },

    /** Leases one case by id (a synchronous request running its own case), if it is waiting and free. */
    async claim(id: string, now: number, leaseUntil: number, by: string): Promise<CaseRow | undefined> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ leaseUntil, leasedBy: by, attempts: sql`${t.attempts} + 1` })
          .where(and(eq(t.id, id), eq(t.status, 'processing'), or(isNull(t.leaseUntil), lte(t.leaseUntil, now))))
          .returning(),
      );
      return rows[0] as CaseRow | undefined;
    },

    /** Whether a waiting case still owns this upload (the sweep leaves those alone). */
    async usesUpload(file: string): Promise<boolean> {
      const rows = await x.run((q) => q.select({ id: t.id }).from(t).where(eq(t.uploadPath, file)).limit(1));
      return rows.length > 0;
    },

    /**
     * Ends a case (keeping its leak for the retention), if `by` still holds its lease; false when another process took
     * it after the lease lapsed.
     */
  };
}

/** What the worker running a case writes while it runs (nothing once the case has ended). */
function workerWrites(x: Executor) {
  const t = x.s.forensicCases;
  const running = (id: string) => and(eq(t.id, id), eq(t.status, 'processing'));
  return {
    /**
     * Keeps a running case's lease alive; false when it is no longer `by`'s (it lapsed and another process took the
     * case).
     */
    async extendLease(id: string, by: string, leaseUntil: number): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ leaseUntil })
          .where(and(running(id), eq(t.leasedBy, by)))
          .returning({ id: t.id }),
      );
      return rows.length > 0;
    },

    /** Gives a case taken as its holder stopped back to the queue, the take not counted against it. */
    async release(id: string, by: string): Promise<void> {
      await x.run((q) =>
        q
          .update(t)
          .set({ leaseUntil: null, leasedBy: null, progress: null, attempts: sql`${t.attempts} - 1` })
          .where(and(running(id), eq(t.leasedBy, by))),
      );
    },

    /** What a running analysis is doing, for the live view. */
    async setProgress(id: string, progress: string): Promise<void> {
      await x.run((q) => q.update(t).set({ progress }).where(running(id)));
    },
  };
}

/** Who streamed the content, and how: the candidates of a leak and the session a match names. */
function leakEvidence(x: Executor) {
  const sessions = x.s.streamSessions;
  const viewers = x.s.viewers;
  return {
    /**
     * The marked sessions of the content, as (viewer, the bits their segments were served by), in
     * viewer order: up to `limit` of them after viewer `after`. A viewer with several sessions comes
     * once per session, one after another. Read from the session index alone (each session holds
     * its viewer's bits as a number), so a million candidates need no lookup per viewer and no
     * sort (bench:matching-db). A session an older server made without them has `bits` null and
     * its viewer's binaryId instead, looked up for that row alone.
     */
    async candidatesPage(contentId: string, after: string | null, limit: number): Promise<CandidateRow[]> {
      const marked = and(eq(sessions.contentId, contentId), eq(sessions.watermarked, true));
      const ownBits = sql`(select ${viewers.binaryId} from ${viewers} where ${viewers.id} = ${sessions.viewerId})`;
      const viewersOwn = sql<string | null>`case when ${sessions.viewerBits} is null then ${ownBits} end`;
      return x.run((q) =>
        q
          .select({ viewerId: sessions.viewerId, bits: sessions.viewerBits, binaryId: viewersOwn })
          .from(sessions)
          .where(after === null ? marked : and(marked, gt(sessions.viewerId, after)))
          .orderBy(sessions.viewerId)
          .limit(limit),
      );
    },

    async hasUnmarkedSessions(contentId: string): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .select({ id: sessions.id })
          .from(sessions)
          .where(and(eq(sessions.contentId, contentId), eq(sessions.watermarked, false)))
          .limit(1),
      );
      return rows.length > 0;
    },

    /**
     * The session a viewer's leak most likely came from: every session of the viewer carries the
     * same bits, so the one that received the most of the content, the latest among equals.
     */
    async sessionOfLeak(viewerId: string, contentId: string) {
      const rows = await x.run((q) =>
        q
          .select()
          .from(sessions)
          .where(and(eq(sessions.viewerId, viewerId), eq(sessions.contentId, contentId)))
          .orderBy(desc(sessions.bytesServed), desc(sessions.createdAt))
          .limit(1),
      );
      return rows[0];
    },

    /** How many sessions of the content the viewer had (the report lists the count). */
    async sessionCount(viewerId: string, contentId: string): Promise<number> {
      const rows = await x.run((q) =>
        q
          .select({ n: count() })
          .from(sessions)
          .where(and(eq(sessions.viewerId, viewerId), eq(sessions.contentId, contentId))),
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}

/** The leaks ended cases keep for the retention period (src/domain/forensics/leak-retention.ts). */
function keptLeaks(x: Executor) {
  const t = x.s.forensicCases;
  return {
    /** Ended cases that still keep their leak and ended at or before `endedBy`, at most `limit` of them. */
    async leaksKeptSince(endedBy: number, limit: number): Promise<Array<{ id: string; uploadPath: string }>> {
      const rows = await x.run((q) =>
        q
          .select({ id: t.id, uploadPath: t.uploadPath })
          .from(t)
          .where(and(ne(t.status, 'processing'), isNotNull(t.uploadPath), lte(t.completedAt, endedBy)))
          .orderBy(t.completedAt)
          .limit(limit),
      );
      return rows as Array<{ id: string; uploadPath: string }>;
    },

    /** Forgets an ended case's leak (once it is removed from the store). */
    async dropUpload(id: string): Promise<void> {
      await x.run((q) =>
        q
          .update(t)
          .set({ uploadPath: null })
          .where(and(eq(t.id, id), ne(t.status, 'processing'))),
      );
    },
  };
}

/** A case finished by the process that holds it, and the pages of cases. */
function caseEnds(x: Executor) {
  const t = x.s.forensicCases;
  const { leakFrames: _frames, ...listed } = getTableColumns(t);
  return {
    async finish(id: string, by: string, outcome: CaseOutcome): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ ...outcome, leaseUntil: null, leasedBy: null, progress: null })
          .where(and(eq(t.id, id), eq(t.status, 'processing'), eq(t.leasedBy, by)))
          .returning({ id: t.id }),
      );
      return rows.length > 0;
    },

    /** One page of cases, most recent first: an organization's, or (null) every case on the platform. */
    async list(
      organizationId: string | null,
      limit: number,
      offset: number,
    ): Promise<{ cases: CaseRow[]; total: number }> {
      const mine = organizationId === null ? undefined : eq(t.organizationId, organizationId);
      const [rows, totals] = await Promise.all([
        // Everything but the frame pairs, which only an evidence report reads.
        x.run((q) =>
          q.select(listed).from(t).where(mine).orderBy(desc(t.createdAt), desc(t.id)).limit(limit).offset(offset),
        ),
        x.run((q) => q.select({ n: count() }).from(t).where(mine)),
      ]);
      return { cases: rows.map((r) => ({ ...r, leakFrames: null }) as CaseRow), total: Number(totals[0]?.n ?? 0) };
    },
  };
}
