import { and, desc, eq, inArray, isNotNull, isNull, lte, or, sql } from 'drizzle-orm';
import { type Executor, skippingLocked } from '../executor.js';
import type * as tables from '../schema/operations.js';

export type { IngestJobStatus } from '../schema/operations.js';

export type IngestJobRow = typeof tables.ingestJobs.$inferSelect;

export type IngestJobOutcome = Pick<IngestJobRow, 'status' | 'contentId' | 'result' | 'failureReason' | 'finishedAt'>;

/** The ingest queue: jobs queued by `drm ingest --queue`, leased by workers, ended done, failed or cancelled. */
export function ingestJobsRepo(x: Executor) {
  return { ...jobRows(x), ...workerLeases(x), ...workerEnds(x), ...jobControl(x) };
}

/** Ended without content: such a job keeps its source a while, for `drm jobs retry`. */
const RETRIABLE = ['failed', 'cancelled'] as const;

/** The rows as the CLI and the sweep read them. */
function jobRows(x: Executor) {
  const t = x.s.ingestJobs;
  return {
    insert: (row: IngestJobRow) => x.run((q) => q.insert(t).values(row)),

    async find(id: string): Promise<IngestJobRow | undefined> {
      const rows = await x.run((q) => q.select().from(t).where(eq(t.id, id)).limit(1));
      return rows[0] as IngestJobRow | undefined;
    },

    /**
     * Whether a job still owns this spooled source: one not done yet, or one that keeps it for a retry (the spool's
     * sweep leaves those).
     */
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

/** A running job that `worker` holds (only its holder may write to it). */
const heldBy = (t: Executor['s']['ingestJobs'], id: string, worker: string) =>
  and(eq(t.id, id), eq(t.status, 'running'), eq(t.worker, worker));

/** What workers do to the queue while they run a job: take it, keep it, write to it. */
function workerLeases(x: Executor) {
  const t = x.s.ingestJobs;
  /** Queued, or taken by a worker whose lease ran out (it died, or lost the database). */
  const takeable = (now: number) =>
    and(or(eq(t.status, 'queued'), eq(t.status, 'running')), or(isNull(t.leaseUntil), lte(t.leaseUntil, now)));
  const held = (id: string, worker: string) => heldBy(t, id, worker);
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
  };
}

/** How a worker lets a job go: given back, or ended. */
function workerEnds(x: Executor) {
  const t = x.s.ingestJobs;
  return {
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
          .where(heldBy(t, id, worker)),
      );
    },

    /**
     * Ends a job, if `worker` still holds it; false when another worker took it after a lapsed
     * lease. A done job lets its source go (the caller removes it); a failed one keeps it for a
     * retry. A job cancelled while its ingest was publishing ends done all the same: the cancel
     * came too late, and the content it made is in the catalog.
     */
    async finish(id: string, worker: string, outcome: IngestJobOutcome): Promise<boolean> {
      const done = outcome.status === 'done';
      const open = done ? inArray(t.status, ['running', 'cancelled']) : eq(t.status, 'running');
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ ...outcome, ...(done && { sourceRef: null }), leaseUntil: null, progress: null })
          .where(and(eq(t.id, id), eq(t.worker, worker), open))
          .returning({ id: t.id }),
      );
      return rows.length > 0;
    },
  };
}

/** What `drm jobs cancel` and `drm jobs retry` do, and the end of the sources kept for a retry. */
function jobControl(x: Executor) {
  const t = x.s.ingestJobs;
  return {
    /**
     * Cancels a queued or running job; undefined when it is neither (any more). A running job's
     * worker learns it at its next lease renewal and stops; the job keeps its worker's name.
     */
    async cancel(id: string, now: number): Promise<IngestJobRow | undefined> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ status: 'cancelled', leaseUntil: null, progress: null, finishedAt: now })
          .where(and(eq(t.id, id), inArray(t.status, ['queued', 'running'])))
          .returning(),
      );
      return rows[0] as IngestJobRow | undefined;
    },

    /**
     * Queues a failed or cancelled job that still keeps its source again, its takes counted
     * afresh. The content id of its last attempt stays: the next worker settles what it left.
     */
    async requeue(id: string): Promise<IngestJobRow | undefined> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({
            status: 'queued',
            attempts: 0,
            worker: null,
            leaseUntil: null,
            progress: null,
            result: null,
            failureReason: null,
            finishedAt: null,
          })
          .where(and(eq(t.id, id), inArray(t.status, RETRIABLE), isNotNull(t.sourceRef)))
          .returning(),
      );
      return rows[0] as IngestJobRow | undefined;
    },

    /** Failed or cancelled jobs that ended at or before `endedBy` and still keep a source. */
    async keptSources(endedBy: number, limit: number): Promise<Array<{ id: string; sourceRef: string }>> {
      const rows = await x.run((q) =>
        q
          .select({ id: t.id, sourceRef: t.sourceRef })
          .from(t)
          .where(and(inArray(t.status, RETRIABLE), isNotNull(t.sourceRef), lte(t.finishedAt, endedBy)))
          .limit(limit),
      );
      return rows as Array<{ id: string; sourceRef: string }>;
    },

    /** Forgets the source of a job that still ended without content; false when a retry took it first. */
    async dropSource(id: string): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ sourceRef: null })
          .where(and(eq(t.id, id), inArray(t.status, RETRIABLE)))
          .returning({ id: t.id }),
      );
      return rows.length > 0;
    },
  };
}
