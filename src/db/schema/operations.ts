import { bigint, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';

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
