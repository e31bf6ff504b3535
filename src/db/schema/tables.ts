import {
  type AnyPgColumn,
  bigint,
  boolean,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/**
 * The one description of drm's tables. It is written with drizzle's pg-core builders (the richer
 * type set: boolean, jsonb, bigint); ./sqlite.ts builds SQLite's tables from it, the row types
 * come from it ($inferSelect), and `npm run db:generate` diffs it against the last snapshot to
 * write both dialects' next migration. Times are epoch milliseconds; money is integer micro-APUSD.
 *
 * Foreign keys carry the names Postgres gave them when migration 1 created them inline
 * (`<table>_<column>_fkey`), so a generated migration that touches one names the real constraint.
 */

export type CaseStatus = 'processing' | 'completed' | 'failed';
export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed' | 'skipped';

export const organizations = pgTable(
  'organizations',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    email: text('email'),
    walletAddress: text('wallet_address').notNull(),
    walletIndex: integer('wallet_index'),
    signingPublicKey: text('signing_public_key'),
    signingAlgorithm: text('signing_algorithm').notNull(),
    webhookUrl: text('webhook_url'),
    webhookSecretSealed: text('webhook_secret_sealed').notNull(),
    plan: text('plan').notNull(),
    isActive: boolean('is_active').notNull(),
    suspendedReason: text('suspended_reason'),
    suspendedAt: bigint('suspended_at', { mode: 'number' }),
    apusdBalanceMicro: bigint('apusd_balance_micro', { mode: 'number' }).notNull(),
    rateLimitPerHour: integer('rate_limit_per_hour'),
    monthlyStreamLimit: integer('monthly_stream_limit'),
    lastRotationAt: bigint('last_rotation_at', { mode: 'number' }),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    /** invoices are paid from the balance when issued (src/domain/billing/autopay.ts) */
    autopayEnabled: boolean('autopay_enabled').notNull().default(false),
    autopayMethod: text('autopay_method'),
    /** the card processor's customer id (Shape B autopay), kept for the funding issue */
    fiatCustomerId: text('fiat_customer_id'),
    /** prices an admin set for this organization (src/domain/billing/terms.ts); null: its plan's */
    billingTerms: jsonb('billing_terms').$type<Record<string, number>>(),
    /** a Watermark Pass waives the watermark fee until then */
    watermarkPassUntil: bigint('watermark_pass_until', { mode: 'number' }),
    /** where APUSD sent to the organization is credited from (lower case; derived, never its own wallet) */
    depositAddress: text('deposit_address'),
    /** when the balance went below zero (a reorg after spending, a lost dispute); null while it is not */
    negativeSince: bigint('negative_since', { mode: 'number' }),
  },
  (t) => [uniqueIndex('organizations_deposit_address').on(t.depositAddress)],
);

/** `<table>.organization_id references organizations(id)`, under the name Postgres gave it. */
const ofOrganization = (table: string, column: AnyPgColumn) =>
  foreignKey({ name: `${table}_organization_id_fkey`, columns: [column], foreignColumns: [organizations.id] });

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    rateLimitPerHour: integer('rate_limit_per_hour'),
    revokedAt: bigint('revoked_at', { mode: 'number' }),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    uniqueIndex('api_keys_hash').on(t.keyHash),
    index('api_keys_org').on(t.organizationId),
    ofOrganization('api_keys', t.organizationId),
  ],
);

export const content = pgTable(
  'content',
  {
    id: text('id').primaryKey(),
    title: text('title').notNull(),
    description: text('description'),
    type: text('type').notNull(),
    /** milliseconds */
    duration: bigint('duration_ms', { mode: 'number' }).notNull(),
    resolution: text('resolution'),
    isWatermarked: boolean('is_watermarked').notNull(),
    segmentCount: integer('segment_count').notNull(),
    storagePath: text('storage_path'),
    /** the AES-128 key of the segments, sealed with the server secret (null before packaging) */
    contentKey: text('content_key'),
    /** which bit of an id each segment carries (src/watermark/segment-rule.ts): 'keyed', or 'fixed' (older content) */
    segmentRule: text('segment_rule').notNull().default('keyed'),
    /** seconds per segment: 2, 4, 6 or 10, the content's choice at ingest */
    segmentSeconds: integer('segment_seconds').notNull().default(10),
    status: text('status').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('content_ready').on(t.status, t.createdAt, t.id)],
);

export const licenses = pgTable(
  'licenses',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    /** a content UUID, or '*' for all content of contentType */
    contentId: text('content_id').notNull(),
    contentType: text('content_type').notNull(),
    licenseScope: text('license_scope').notNull(),
    watermarkingEnabled: boolean('watermarking_enabled').notNull(),
    pricePerStreamMicro: bigint('price_per_stream_micro', { mode: 'number' }).notNull(),
    isActive: boolean('is_active').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    uniqueIndex('licenses_target').on(t.organizationId, t.contentId, t.contentType),
    ofOrganization('licenses', t.organizationId),
  ],
);

export const rateCounters = pgTable(
  'rate_counters',
  {
    bucket: text('bucket').notNull(),
    windowStart: bigint('window_start', { mode: 'number' }).notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ name: 'rate_counters_pkey', columns: [t.bucket, t.windowStart] })],
);

export const adminWallets = pgTable('admin_wallets', {
  address: text('address').primaryKey(),
  grantedAt: bigint('granted_at', { mode: 'number' }).notNull(),
});

export const adminNonces = pgTable('admin_nonces', {
  nonce: text('nonce').primaryKey(),
  expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  usedAt: bigint('used_at', { mode: 'number' }),
});

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    eventType: text('event_type').notNull(),
    /** the exact envelope bytes that are signed and sent, kept so that every retry sends the same */
    body: text('body').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull(),
    attempts: integer('attempts').notNull(),
    responseCode: integer('response_code'),
    lastError: text('last_error'),
    nextAttemptAt: bigint('next_attempt_at', { mode: 'number' }),
    leaseUntil: bigint('lease_until', { mode: 'number' }),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    deliveredAt: bigint('delivered_at', { mode: 'number' }),
  },
  (t) => [
    index('webhook_due').on(t.status, t.nextAttemptAt),
    index('webhook_org').on(t.organizationId, t.createdAt),
    ofOrganization('webhook_deliveries', t.organizationId),
  ],
);

export const viewers = pgTable(
  'viewers',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    externalViewerId: text('external_viewer_id').notNull(),
    binaryId: text('binary_id').notNull(),
    walletAddress: text('wallet_address').notNull(),
    walletIndex: integer('wallet_index'),
    hasOwnWallet: boolean('has_own_wallet').notNull(),
    email: text('email'),
    totalStreams: integer('total_streams').notNull(),
    isBlocked: boolean('is_blocked').notNull(),
    blockedReason: text('blocked_reason'),
    firstSeen: bigint('first_seen', { mode: 'number' }).notNull(),
    lastSeen: bigint('last_seen', { mode: 'number' }).notNull(),
  },
  (t) => [
    uniqueIndex('viewers_binary').on(t.binaryId),
    uniqueIndex('viewers_external').on(t.organizationId, t.externalViewerId),
    ofOrganization('viewers', t.organizationId),
    // the viewer-wallets counter starts at max(wallet_index) + 1: read from the index, not by a scan
    index('viewers_wallet_index').on(t.walletIndex),
  ],
);

export const streamSessions = pgTable(
  'stream_sessions',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    apiKeyId: text('api_key_id').notNull(),
    contentId: text('content_id').notNull(),
    viewerId: text('viewer_id').notNull(),
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    isActive: boolean('is_active').notNull(),
    bytesServed: bigint('bytes_served', { mode: 'number' }).notNull(),
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    /** served A or B by the viewer's bits (false: the license turned watermarking off, A throughout) */
    watermarked: boolean('watermarked').notNull().default(true),
    /** the license's own price per stream when it has one (else null: the plan's), fixed at the start */
    pricePerStreamMicro: bigint('price_per_stream_micro', { mode: 'number' }),
    /**
     * The viewer's binaryId (permanent) as the number it spells in base 2, character 0 the highest
     * bit, copied at the start so that a leak's candidates are read from one index without a
     * lookup per viewer (8 bytes in each index entry, where the 40 characters took 41). Null only
     * on a session an older server made after migration 18: the candidates' read takes the
     * viewer's then.
     */
    viewerBits: bigint('viewer_bits', { mode: 'number' }),
  },
  (t) => [
    index('sessions_org_created').on(t.organizationId, t.createdAt),
    index('sessions_viewer').on(t.viewerId),
    // a leak's candidates (every viewer with a marked session of the item, with their bits) read from this index alone,
    // in viewer order
    index('sessions_content_viewer').on(t.contentId, t.viewerId, t.watermarked, t.viewerBits),
    // the live view counts unexpired sessions and a period's streams across organizations
    index('sessions_expires').on(t.expiresAt),
    index('sessions_created').on(t.createdAt),
    ofOrganization('stream_sessions', t.organizationId),
    foreignKey({ name: 'stream_sessions_viewer_id_fkey', columns: [t.viewerId], foreignColumns: [viewers.id] }),
  ],
);

/** A leak analysis: queued (processing) with its upload on disk, then completed or failed with its report. */
export const forensicCases = pgTable(
  'forensic_cases',
  {
    id: text('id').primaryKey(),
    /** the organization whose investigator asked (null for a local `drm analyze`) */
    organizationId: text('organization_id'),
    apiKeyId: text('api_key_id'),
    contentId: text('content_id').notNull(),
    contentType: text('content_type').notNull(),
    status: text('status').$type<CaseStatus>().notNull(),
    failureReason: text('failure_reason'),
    /** the leak on disk while the case waits or runs; removed when it ends */
    uploadPath: text('upload_path'),
    uploadName: text('upload_name'),
    uploadBytes: bigint('upload_bytes', { mode: 'number' }),
    attempts: integer('attempts').notNull(),
    leaseUntil: bigint('lease_until', { mode: 'number' }),
    /** the process that holds the lease (host, pid and a random tag): only it may extend or end the case */
    leasedBy: text('leased_by'),
    classification: text('classification'),
    binaryId: text('binary_id'),
    supportedBits: integer('supported_bits'),
    matchedViewerId: text('matched_viewer_id'),
    matchedSessionId: text('matched_session_id'),
    /** JSON of the whole report (src/domain/forensics/report.ts) */
    report: text('report'),
    /**
     * JSON of the leak's frame pairs for the evidence report (≈100 KB): kept out of `report`, which every list reads
     */
    leakFrames: text('leak_frames'),
    /** JSON {stage, done, total} of a running analysis, written now and then by its worker */
    progress: text('progress'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    completedAt: bigint('completed_at', { mode: 'number' }),
  },
  (t) => [
    index('cases_org_created').on(t.organizationId, t.createdAt),
    index('cases_queue').on(t.status, t.leaseUntil),
    ofOrganization('forensic_cases', t.organizationId),
  ],
);

/**
 * Named counters, each advanced atomically by one statement (an upsert that returns the new
 * value), shared by every server on the database: `viewer-ids` numbers the viewers whose ids
 * src/domain/identity/viewer-ids.ts derives from it.
 */
export const counters = pgTable('counters', {
  name: text('name').primaryKey(),
  value: bigint('value', { mode: 'number' }).notNull(),
});
