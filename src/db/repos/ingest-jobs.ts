import { and, desc, eq, isNull, lte, or, sql } from 'drizzle-orm';
import { type Executor, skippingLocked } from '../executor.js';
import type * as tables from '../schema/operations.js';

export type { IngestJobStatus } from '../schema/operations.js';

export type IngestJobRow = typeof tables.ingestJobs.$inferSelect;

export type IngestJobOutcome = Pick<IngestJobRow, 'status' | 'contentId' | 'result' | 'failureReason' | 'finishedAt'>;

/** The ingest queue: jobs queued by `drm ingest --queue`, leased by workers, ended done or failed. */
export function ingestJobsRepo(x: Executor) {
  return { ...jobRows(x), ...workerLeases(x) };
}

/** The rows as the CLI and the sweep read them. */
function jobRows(x: Executor) {
  const t = x.s.ingestJobs;
  return {
    insert: (row: IngestJobRow) => x.run((q) => q.insert(t).values(row)),

    async find(id: string): Promise<IngestJobRow | undefined> {
      const rows = await x.run((q) => q.select().from(t).where(eq(t.id, id)).limit(1));
      return rows[0] as IngestJobRow | undefined;
    },

    /** Whether a job that has not ended still owns this spooled source (the spool's sweep leaves those). */
    async usesSource(ref: string): Promise<boolean> {
      const rows = await x.run((q) => q.select({ id: t.id }).from(t).where(eq(t.sourceRef, ref)).limit(1));
      return rows.length > 0;
    },

    async list(limit: number): Promise<IngestJobRow[]> {
      return (await x.run((q) =>
        q.select().from(t).orderBy(desc(t.createdAt), desc(t.id)).limit(limit),
      )) as IngestJobRow[];
    },
  };
}

/** What workers do to the queue: take a job, keep it, give it back, end it. */
function workerLeases(x: Executor) {
  const t = x.s.ingestJobs;
  /** Queued, or taken by a worker whose lease ran out (it died, or lost the database). */
  const takeable = (now: number) =>
    and(or(eq(t.status, 'queued'), eq(t.status, 'running')), or(isNull(t.leaseUntil), lte(t.leaseUntil, now)));
  const held = (id: string, worker: string) => and(eq(t.id, id), eq(t.status, 'running'), eq(t.worker, worker));
  return {
    /**
     * Leases the oldest takeable job to `worker` in one statement (the pick locked and skipped by
     * the other workers on Postgres); `attempts` counts the takes, to give up on a job that kills
     * its worker every time.
     */
    async claimNext(worker: string, now: number, leaseUntil: number): Promise<IngestJobRow | undefined> {
      const rows = await x.run((q) => {
        const next = skippingLocked(
          x,
          q.select({ id: t.id }).from(t).where(takeable(now)).orderBy(t.createdAt, t.id).limit(1),
        );
        return q
          .update(t)
          .set({ status: 'running', worker, leaseUntil, attempts: sql`${t.attempts} + 1` })
          .where(and(eq(t.id, sql`(${next})`), takeable(now)))
          .returning();
      });
      return rows[0] as IngestJobRow | undefined;
    },

    /** Keeps a running job's lease; false when the job is no longer this worker's (another took it after a lapse). */
    async extendLease(id: string, worker: string, leaseUntil: number): Promise<boolean> {
      const rows = await x.run((q) => q.update(t).set({ leaseUntil }).where(held(id, worker)).returning({ id: t.id }));
      return rows.length > 0;
    },

    async setProgress(id: string, worker: string, progress: string): Promise<void> {
      await x.run((q) => q.update(t).set({ progress }).where(held(id, worker)));
    },

    /** Records the content id an attempt ingests under, before it charges or publishes anything. */
    async setAttemptContent(id: string, worker: string, contentId: string): Promise<void> {
      await x.run((q) => q.update(t).set({ contentId }).where(held(id, worker)));
    },

    /**
     * Gives a job back to the queue (a worker told to stop, its attempt cancelled and cleaned up):
     * the next worker starts it afresh, and the take is not counted against it.
     */
    async release(id: string, worker: string): Promise<void> {
      await x.run((q) =>
        q
          .update(t)
          .set({
            status: 'queued',
            worker: null,
            leaseUntil: null,
            progress: null,
            contentId: null,
            attempts: sql`${t.attempts} - 1`,
          })
          .where(held(id, worker)),
      );
    },

    /** Ends a job, if `worker` still holds it; false when another worker took it after a lapsed lease. */
    async finish(id: string, worker: string, outcome: IngestJobOutcome): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ ...outcome, sourceRef: null, leaseUntil: null, progress: null })
          .where(held(id, worker))
          .returning({ id: t.id }),
      );
      return rows.length > 0;
    },
  };
}
