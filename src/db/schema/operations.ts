import { bigint, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';

/**
 * Each server's traffic in five-second buckets: what `drm top` and the admin overview read to
 * show requests, errors, segment bytes and new streams per minute across every server on the
 * database (the Prometheus counters are per process). Rows older than an hour are pruned.
 */
export const trafficBuckets = pgTable(
  'traffic_buckets',
  {
    bucketStart: bigint('bucket_start', { mode: 'number' }).notNull(),
    /** the server process that counted them (host and pid), so two servers never add into one row's race */
    instanceId: text('instance_id').notNull(),
    requests: integer('requests').notNull(),
    clientErrors: integer('client_errors').notNull(),
    serverErrors: integer('server_errors').notNull(),
    segmentBytes: bigint('segment_bytes', { mode: 'number' }).notNull(),
    sessionsStarted: integer('sessions_started').notNull(),
  },
  (t) => [primaryKey({ name: 'traffic_buckets_pkey', columns: [t.bucketStart, t.instanceId] })],
);

/**
 * The segment bytes each session was sent, in the same five-second buckets: which sessions are
 * playing and how fast, for the live view's active sessions and its now-playing list, without a
 * write to the sessions table per segment. Two servers that serve one session add into one row.
 */
export const sessionTraffic = pgTable(
  'session_traffic',
  {
    bucketStart: bigint('bucket_start', { mode: 'number' }).notNull(),
    sessionId: text('session_id').notNull(),
    segmentBytes: bigint('segment_bytes', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ name: 'session_traffic_pkey', columns: [t.bucketStart, t.sessionId] })],
);

export type IngestJobStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';

/**
 * An ingest queued for a worker (`drm ingest --queue`): the source waits in the store's spool, a
 * worker leases the job (a lease that runs out gives it to another worker), writes its progress,
 * and ends it done (with the content it made) or failed; `drm jobs cancel` ends it cancelled.
 */
export const ingestJobs = pgTable(
  'ingest_jobs',
  {
    id: text('id').primaryKey(),
    status: text('status').$type<IngestJobStatus>().notNull(),
    /** JSON of what was asked: title, type, watermark, description, crf, preset, organizationId */
    request: text('request').notNull(),
    /** the source in the spool (src/storage/spool.ts) until the job ends */
    sourceRef: text('source_ref'),
    sourceName: text('source_name').notNull(),
    sourceBytes: bigint('source_bytes', { mode: 'number' }).notNull(),
    attempts: integer('attempts').notNull(),
    leaseUntil: bigint('lease_until', { mode: 'number' }),
    /** the worker that has it (host and pid), for the live view and the logs */
    worker: text('worker'),
    /** JSON {stage, done, total}, written now and then by its worker */
    progress: text('progress'),
    contentId: text('content_id'),
    /** JSON of the ingest's result */
    result: text('result'),
    failureReason: text('failure_reason'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    finishedAt: bigint('finished_at', { mode: 'number' }),
  },
  (t) => [index('ingest_jobs_queue').on(t.status, t.leaseUntil, t.createdAt)],
);
