import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';

// Mirrors ./sqlite.ts column for column: repositories are written once and run on either.
// Times are epoch milliseconds; money is integer micro-APUSD.

export const organizations = pgTable('organizations', {
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
});

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
  (t) => [uniqueIndex('api_keys_hash').on(t.keyHash), index('api_keys_org').on(t.organizationId)],
);

export const content = pgTable(
  'content',
  {
    id: text('id').primaryKey(),
    title: text('title').notNull(),
    description: text('description'),
    type: text('type').notNull(),
    duration: bigint('duration_ms', { mode: 'number' }).notNull(),
    resolution: text('resolution'),
    isWatermarked: boolean('is_watermarked').notNull(),
    segmentCount: integer('segment_count').notNull(),
    storagePath: text('storage_path'),
    contentKey: text('content_key'),
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
    contentId: text('content_id').notNull(),
    contentType: text('content_type').notNull(),
    licenseScope: text('license_scope').notNull(),
    watermarkingEnabled: boolean('watermarking_enabled').notNull(),
    pricePerStreamMicro: bigint('price_per_stream_micro', { mode: 'number' }).notNull(),
    isActive: boolean('is_active').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [uniqueIndex('licenses_target').on(t.organizationId, t.contentId, t.contentType)],
);

export const rateCounters = pgTable(
  'rate_counters',
  {
    bucket: text('bucket').notNull(),
    windowStart: bigint('window_start', { mode: 'number' }).notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.bucket, t.windowStart] })],
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
    body: text('body').notNull(),
    status: text('status').notNull(),
    attempts: integer('attempts').notNull(),
    responseCode: integer('response_code'),
    lastError: text('last_error'),
    nextAttemptAt: bigint('next_attempt_at', { mode: 'number' }),
    leaseUntil: bigint('lease_until', { mode: 'number' }),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    deliveredAt: bigint('delivered_at', { mode: 'number' }),
  },
  (t) => [index('webhook_due').on(t.status, t.nextAttemptAt), index('webhook_org').on(t.organizationId, t.createdAt)],
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
  },
  (t) => [index('sessions_org_created').on(t.organizationId, t.createdAt), index('sessions_viewer').on(t.viewerId)],
);

/** A leak analysis: queued (processing) with its upload on disk, then completed or failed with its report. */
export const forensicCases = pgTable(
  'forensic_cases',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id'),
    apiKeyId: text('api_key_id'),
    contentId: text('content_id').notNull(),
    contentType: text('content_type').notNull(),
    status: text('status').notNull(),
    failureReason: text('failure_reason'),
    uploadPath: text('upload_path'),
    uploadName: text('upload_name'),
    uploadBytes: bigint('upload_bytes', { mode: 'number' }),
    attempts: integer('attempts').notNull(),
    leaseUntil: bigint('lease_until', { mode: 'number' }),
    classification: text('classification'),
    binaryId: text('binary_id'),
    supportedBits: integer('supported_bits'),
    matchedViewerId: text('matched_viewer_id'),
    matchedSessionId: text('matched_session_id'),
    report: text('report'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    completedAt: bigint('completed_at', { mode: 'number' }),
  },
  (t) => [index('cases_org_created').on(t.organizationId, t.createdAt), index('cases_queue').on(t.status, t.leaseUntil)],
);
