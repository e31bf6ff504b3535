import { and, count, countDistinct, desc, eq, gt, gte, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';
import type { IngestJobRow } from './ingest-jobs.js';

/** How many cases the live view lists: the queue and the newest decided. */
const LISTED_CASES = 20;
/** How many running ingests it lists: one a worker, and few deployments run more workers than this. */
const LISTED_INGESTS = 10;

/**
 * The platform-wide figures of the live view (`drm top`, GET /admin/overview): counts across
 * every organization, each bounded by an index (sessions by expiry and by start, cases by status).
 */
export function overviewRepo(x: Executor) {
  const s = x.s.streamSessions;
  const c = x.s.forensicCases;
  return {
    ...overviewCases(x),
    ...ingestQueueFigures(x),

    /** Sessions neither ended nor expired: playing or not (the playing ones are read off the traffic buckets). */
    async openSessions(now: number): Promise<number> {
      const rows = await x.run((q) =>
        q
          .select({ n: count() })
          .from(s)
          .where(and(gt(s.expiresAt, now), eq(s.isActive, true))),
      );
      return Number(rows[0]?.n ?? 0);
    },

    /** Streams (sessions started), their bytes and the organizations they belong to, in [start, end). */
    async streamsBetween(
      start: number,
      end: number,
    ): Promise<{ streams: number; bytes: number; organizations: number }> {
      const rows = await x.run((q) =>
        q
          .select({
            n: count(),
            bytes: sql<number | null>`sum(${s.bytesServed})`,
            orgs: countDistinct(s.organizationId),
          })
          .from(s)
          .where(and(gte(s.createdAt, start), lt(s.createdAt, end))),
      );
      return {
        streams: Number(rows[0]?.n ?? 0),
        bytes: Number(rows[0]?.bytes ?? 0),
        organizations: Number(rows[0]?.orgs ?? 0),
      };
    },

    /** How many cases wait (never taken, or their lease ran out) and how many run, over the whole queue. */
    async queueCounts(now: number): Promise<{ waiting: number; running: number }> {
      const processing = eq(c.status, 'processing');
      const [waiting, running] = await Promise.all([
        x.run((q) =>
          q
            .select({ n: count() })
            .from(c)
            .where(and(processing, or(isNull(c.leaseUntil), lte(c.leaseUntil, now)))),
        ),
        x.run((q) =>
          q
            .select({ n: count() })
            .from(c)
            .where(and(processing, gt(c.leaseUntil, now))),
        ),
      ]);
      return { waiting: Number(waiting[0]?.n ?? 0), running: Number(running[0]?.n ?? 0) };
    },

    /** The first cases of the queue to list: running ones first, then the oldest waiting. */
  };
}

/** The ingest queue's figures: its counts, the running jobs and the last hour's failures. */
function ingestQueueFigures(x: Executor) {
  const j = x.s.ingestJobs;
  /**
   * A job is running while its worker keeps the lease; a lapsed one waits for the next worker (ingest-jobs.ts,
   * takeable).
   */
  const ingestRunning = (now: number) => and(eq(j.status, 'running'), gt(j.leaseUntil, now));
  const ingestWaiting = (now: number) =>
    or(eq(j.status, 'queued'), and(eq(j.status, 'running'), or(isNull(j.leaseUntil), lte(j.leaseUntil, now))));
  return {
    /**
     * How many ingests wait (queued, or their worker's lease ran out) and how many run: both read the queue's index.
     */
    async ingestCounts(now: number): Promise<{ waiting: number; running: number }> {
      const [waiting, running] = await Promise.all([
        x.run((q) => q.select({ n: count() }).from(j).where(ingestWaiting(now))),
        x.run((q) => q.select({ n: count() }).from(j).where(ingestRunning(now))),
      ]);
      return { waiting: Number(waiting[0]?.n ?? 0), running: Number(running[0]?.n ?? 0) };
    },

    /** The running ingests, oldest queued first: the list keeps its order from one refresh to the next. */
    async runningIngests(now: number): Promise<IngestJobRow[]> {
      return (await x.run((q) =>
        q.select().from(j).where(ingestRunning(now)).orderBy(j.createdAt, j.id).limit(LISTED_INGESTS),
      )) as IngestJobRow[];
    },

    /** Ingests that failed since `since`, and the newest of them (its reason is what the operator reads first). */
    async ingestFailures(since: number): Promise<{ count: number; latest: IngestJobRow | undefined }> {
      const failedSince = and(eq(j.status, 'failed'), gte(j.finishedAt, since));
      const [n, latest] = await Promise.all([
        x.run((q) => q.select({ n: count() }).from(j).where(failedSince)),
        x.run((q) => q.select().from(j).where(failedSince).orderBy(desc(j.finishedAt), desc(j.id)).limit(1)),
      ]);
      return { count: Number(n[0]?.n ?? 0), latest: latest[0] as IngestJobRow | undefined };
    },
  };
}

/** The live view's cases (queued and recent) and open invoices. */
function overviewCases(x: Executor) {
  const c = x.s.forensicCases;
  const inv = x.s.invoices;
  return {
    queuedCases: (now: number) =>
      x.run((q) =>
        q
          .select({
            id: c.id,
            contentId: c.contentId,
            leaseUntil: c.leaseUntil,
            progress: c.progress,
            attempts: c.attempts,
            createdAt: c.createdAt,
          })
          .from(c)
          .where(eq(c.status, 'processing'))
          .orderBy(sql`case when ${c.leaseUntil} > ${now} then 0 else 1 end`, c.createdAt)
          .limit(LISTED_CASES),
      ),

    recentCases: (limit: number) =>
      x.run((q) =>
        q
          .select({
            id: c.id,
            contentId: c.contentId,
            organizationId: c.organizationId,
            status: c.status,
            classification: c.classification,
            binaryId: c.binaryId,
            matchedViewerId: c.matchedViewerId,
            createdAt: c.createdAt,
            completedAt: c.completedAt,
          })
          .from(c)
          .orderBy(desc(c.createdAt))
          .limit(Math.min(limit, LISTED_CASES)),
      ),

    async openInvoices(): Promise<{ count: number; amountMicro: number }> {
      const rows = await x.run((q) =>
        q
          .select({ n: count(), sum: sql<number | null>`sum(${inv.amountMicro})` })
          .from(inv)
          .where(eq(inv.paymentStatus, 'open')),
      );
      return { count: Number(rows[0]?.n ?? 0), amountMicro: Number(rows[0]?.sum ?? 0) };
    },
  };
}
