import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

// Mirrors ./pg.ts column for column: repositories are written once and run on either.
// Times are epoch milliseconds; money is integer micro-APUSD.

export const organizations = sqliteTable('organizations', {
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
  isActive: integer('is_active', { mode: 'boolean' }).notNull(),
  suspendedReason: text('suspended_reason'),
  suspendedAt: integer('suspended_at'),
  apusdBalanceMicro: integer('apusd_balance_micro').notNull(),
  rateLimitPerHour: integer('rate_limit_per_hour'),
  monthlyStreamLimit: integer('monthly_stream_limit'),
  lastRotationAt: integer('last_rotation_at'),
  createdAt: integer('created_at').notNull(),
});

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    scopes: text('scopes', { mode: 'json' }).$type<string[]>().notNull(),
    rateLimitPerHour: integer('rate_limit_per_hour'),
    revokedAt: integer('revoked_at'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('api_keys_hash').on(t.keyHash), index('api_keys_org').on(t.organizationId)],
);

export const content = sqliteTable(
  'content',
  {
    id: text('id').primaryKey(),
    title: text('title').notNull(),
    description: text('description'),
    type: text('type').notNull(),
    duration: integer('duration_ms').notNull(),
    resolution: text('resolution'),
    isWatermarked: integer('is_watermarked', { mode: 'boolean' }).notNull(),
    segmentCount: integer('segment_count').notNull(),
    storagePath: text('storage_path'),
    contentKey: text('content_key'),
    status: text('status').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('content_ready').on(t.status, t.createdAt, t.id)],
);

export const licenses = sqliteTable(
  'licenses',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    contentId: text('content_id').notNull(),
    contentType: text('content_type').notNull(),
    licenseScope: text('license_scope').notNull(),
    watermarkingEnabled: integer('watermarking_enabled', { mode: 'boolean' }).notNull(),
    pricePerStreamMicro: integer('price_per_stream_micro').notNull(),
    isActive: integer('is_active', { mode: 'boolean' }).notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('licenses_target').on(t.organizationId, t.contentId, t.contentType)],
);

export const rateCounters = sqliteTable(
  'rate_counters',
  {
    bucket: text('bucket').notNull(),
    windowStart: integer('window_start').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.bucket, t.windowStart] })],
);

export const adminWallets = sqliteTable('admin_wallets', {
  address: text('address').primaryKey(),
  grantedAt: integer('granted_at').notNull(),
});

export const adminNonces = sqliteTable('admin_nonces', {
  nonce: text('nonce').primaryKey(),
  expiresAt: integer('expires_at').notNull(),
  usedAt: integer('used_at'),
});

export const webhookDeliveries = sqliteTable(
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
    nextAttemptAt: integer('next_attempt_at'),
    leaseUntil: integer('lease_until'),
    createdAt: integer('created_at').notNull(),
    deliveredAt: integer('delivered_at'),
  },
  (t) => [index('webhook_due').on(t.status, t.nextAttemptAt), index('webhook_org').on(t.organizationId, t.createdAt)],
);

export const viewers = sqliteTable(
  'viewers',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    externalViewerId: text('external_viewer_id').notNull(),
    binaryId: text('binary_id').notNull(),
    walletAddress: text('wallet_address').notNull(),
    walletIndex: integer('wallet_index'),
    hasOwnWallet: integer('has_own_wallet', { mode: 'boolean' }).notNull(),
    email: text('email'),
    totalStreams: integer('total_streams').notNull(),
    isBlocked: integer('is_blocked', { mode: 'boolean' }).notNull(),
    blockedReason: text('blocked_reason'),
    firstSeen: integer('first_seen').notNull(),
    lastSeen: integer('last_seen').notNull(),
  },
  (t) => [
    uniqueIndex('viewers_binary').on(t.binaryId),
    uniqueIndex('viewers_external').on(t.organizationId, t.externalViewerId),
  ],
);

export const streamSessions = sqliteTable(
  'stream_sessions',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    apiKeyId: text('api_key_id').notNull(),
    contentId: text('content_id').notNull(),
    viewerId: text('viewer_id').notNull(),
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    isActive: integer('is_active', { mode: 'boolean' }).notNull(),
    bytesServed: integer('bytes_served').notNull(),
    expiresAt: integer('expires_at').notNull(),
    createdAt: integer('created_at').notNull(),
    /** served A or B by the viewer's bits (false: the license turned watermarking off, A throughout) */
    watermarked: integer('watermarked', { mode: 'boolean' }).notNull().default(true),
  },
  (t) => [index('sessions_org_created').on(t.organizationId, t.createdAt), index('sessions_viewer').on(t.viewerId)],
);

/** A leak analysis: queued (processing) with its upload on disk, then completed or failed with its report. */
export const forensicCases = sqliteTable(
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
    uploadBytes: integer('upload_bytes'),
    attempts: integer('attempts').notNull(),
    leaseUntil: integer('lease_until'),
    classification: text('classification'),
    binaryId: text('binary_id'),
    supportedBits: integer('supported_bits'),
    matchedViewerId: text('matched_viewer_id'),
    matchedSessionId: text('matched_session_id'),
    report: text('report'),
    createdAt: integer('created_at').notNull(),
    completedAt: integer('completed_at'),
  },
  (t) => [index('cases_org_created').on(t.organizationId, t.createdAt), index('cases_queue').on(t.status, t.leaseUntil)],
);
