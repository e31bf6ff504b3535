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
import { organizations } from './tables.js';

/**
 * The money tables (src/domain/billing). Amounts are integer micro-APUSD; times epoch
 * milliseconds. The ledger is append-only: nothing updates or deletes an entry, and the cached
 * organizations.apusd_balance_micro moves only in the transaction that appends one.
 */

/** `<table>.organization_id references organizations(id)`, named as ./tables.ts names its keys. */
const ofOrganization = (table: string, column: AnyPgColumn) =>
  foreignKey({ name: `${table}_organization_id_fkey`, columns: [column], foreignColumns: [organizations.id] });

export type PaymentStatus = 'open' | 'paid' | 'void';

export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    /** deposit, credit, invoice_payment, watermark_fee, refund, … (src/domain/billing/ledger.ts) */
    kind: text('kind').notNull(),
    /** signed: credits add to the balance, debits take from it */
    amountMicro: bigint('amount_micro', { mode: 'number' }).notNull(),
    balanceAfterMicro: bigint('balance_after_micro', { mode: 'number' }).notNull(),
    /** what the entry is for, once: a retry with the same key adds nothing */
    idempotencyKey: text('idempotency_key').notNull(),
    reference: text('reference'),
    memo: text('memo'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    uniqueIndex('ledger_idempotency').on(t.idempotencyKey),
    index('ledger_org_created').on(t.organizationId, t.createdAt),
    ofOrganization('ledger_entries', t.organizationId),
  ],
);

export const invoices = pgTable(
  'invoices',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    periodStart: bigint('period_start', { mode: 'number' }).notNull(),
    periodEnd: bigint('period_end', { mode: 'number' }).notNull(),
    totalStreams: bigint('total_streams', { mode: 'number' }).notNull(),
    totalBytes: bigint('total_bytes', { mode: 'number' }).notNull(),
    amountMicro: bigint('amount_micro', { mode: 'number' }).notNull(),
    paymentStatus: text('payment_status').$type<PaymentStatus>().notNull(),
    issuedAt: bigint('issued_at', { mode: 'number' }).notNull(),
    paidAt: bigint('paid_at', { mode: 'number' }),
    /** card autopay: attempts made, and when the next one is due (null: none) */
    autopayAttempts: integer('autopay_attempts').notNull().default(0),
    nextAutopayAt: bigint('next_autopay_at', { mode: 'number' }),
    /**
     * issued below the card minimum (0.50) under card autopay: not charged; while it stays open,
     * the next invoice takes its amount as a carried_forward line (docs/billing.md, "Dust")
     */
    carryForward: boolean('carry_forward').notNull().default(false),
    /** the invoice that took this one's amount (this one is then void): set once, with that invoice */
    carriedInto: text('carried_into'),
  },
  (t) => [
    // one invoice per organization and period: two servers closing a period at once cannot both issue it
    uniqueIndex('invoices_org_period').on(t.organizationId, t.periodStart),
    index('invoices_status').on(t.paymentStatus, t.organizationId),
    ofOrganization('invoices', t.organizationId),
  ],
);

export const invoiceLines = pgTable(
  'invoice_lines',
  {
    id: text('id').primaryKey(),
    invoiceId: text('invoice_id').notNull(),
    /** subscription, streams, gb, revenue_share, late_usage */
    kind: text('kind').notNull(),
    description: text('description').notNull(),
    /** the period the line charges for (earlier than the invoice's for late usage) */
    periodStart: bigint('period_start', { mode: 'number' }).notNull(),
    quantity: bigint('quantity', { mode: 'number' }).notNull(),
    unitPriceMicro: bigint('unit_price_micro', { mode: 'number' }).notNull(),
    amountMicro: bigint('amount_micro', { mode: 'number' }).notNull(),
  },
  (t) => [index('invoice_lines_invoice').on(t.invoiceId)],
);

/**
 * What has been invoiced of one organization's period: the streams, bytes and usage charge, and
 * the terms they were priced at. Usage that lands later (bytes of a session still playing at the
 * close) is the difference, invoiced on a later invoice at the same terms.
 */
export const periodUsage = pgTable(
  'period_usage',
  {
    organizationId: text('organization_id').notNull(),
    periodStart: bigint('period_start', { mode: 'number' }).notNull(),
    periodEnd: bigint('period_end', { mode: 'number' }).notNull(),
    streams: bigint('streams', { mode: 'number' }).notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    amountMicro: bigint('amount_micro', { mode: 'number' }).notNull(),
    terms: jsonb('terms').$type<Record<string, number>>().notNull(),
    /** every session of the period had ended at the last close: nothing more can land */
    settled: boolean('settled').notNull(),
  },
  (t) => [
    primaryKey({ name: 'period_usage_pkey', columns: [t.organizationId, t.periodStart] }),
    index('period_usage_open').on(t.organizationId, t.settled),
    ofOrganization('period_usage', t.organizationId),
  ],
);

/**
 * A running sum of one organization's sessions per period (the month a session started in) and
 * per price: what the close and the upcoming invoice read instead of the month's sessions (one
 * row per price and shard, not one per session). Kept by database triggers on stream_sessions
 * (migration 21): a new session adds a stream, a count of bytes its bytes, whichever server or
 * console writes them, in the same statement. Never written by drm's code.
 */
export const usageCounters = pgTable(
  'usage_counters',
  {
    organizationId: text('organization_id').notNull(),
    periodStart: bigint('period_start', { mode: 'number' }).notNull(),
    /** the license's own price per stream, or -1 for the plan's (a key column cannot be null) */
    priceMicro: bigint('price_micro', { mode: 'number' }).notNull(),
    /** 0–7 from the session id: concurrent segments of one organization add to eight rows, not queue on one */
    shard: integer('shard').notNull(),
    streams: bigint('streams', { mode: 'number' }).notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    /** when the last of these sessions expires: bytes can land until then */
    lastExpiry: bigint('last_expiry', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({ name: 'usage_counters_pkey', columns: [t.organizationId, t.periodStart, t.priceMicro, t.shard] }),
  ],
);

export const subscriptions = pgTable(
  'subscriptions',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    /** videos, music, flipbooks, cards, tickets */
    product: text('product').notNull(),
    /** month or year */
    interval: text('interval').notNull(),
    priceMicro: bigint('price_micro', { mode: 'number' }).notNull(),
    startedAt: bigint('started_at', { mode: 'number' }).notNull(),
    /** the first instant it is no longer charged (end of the period or term it was cancelled in) */
    endsAt: bigint('ends_at', { mode: 'number' }),
    cancelledAt: bigint('cancelled_at', { mode: 'number' }),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    index('subscriptions_org').on(t.organizationId, t.product),
    ofOrganization('subscriptions', t.organizationId),
  ],
);

export type DepositStatus = 'credited' | 'reversed';

/** APUSD transfers to deposit addresses, once each (id: chainId:txHash:logIndex), with where they were read. */
export const deposits = pgTable(
  'deposits',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    chainId: integer('chain_id').notNull(),
    txHash: text('tx_hash').notNull(),
    logIndex: integer('log_index').notNull(),
    blockNumber: bigint('block_number', { mode: 'number' }).notNull(),
    blockHash: text('block_hash').notNull(),
    fromAddress: text('from_address').notNull(),
    toAddress: text('to_address').notNull(),
    amountMicro: bigint('amount_micro', { mode: 'number' }).notNull(),
    status: text('status').$type<DepositStatus>().notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    index('deposits_org_created').on(t.organizationId, t.createdAt),
    index('deposits_block').on(t.chainId, t.blockNumber),
    ofOrganization('deposits', t.organizationId),
  ],
);

/** How far the deposit watcher has read one token on one chain, and the hashes of the blocks it read (for reorgs). */
export const chainCursors = pgTable('chain_cursors', {
  id: text('id').primaryKey(),
  nextBlock: bigint('next_block', { mode: 'number' }).notNull(),
  updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
});

export const chainBlocks = pgTable(
  'chain_blocks',
  {
    cursorId: text('cursor_id').notNull(),
    number: bigint('number', { mode: 'number' }).notNull(),
    hash: text('hash').notNull(),
  },
  (t) => [primaryKey({ name: 'chain_blocks_pkey', columns: [t.cursorId, t.number] })],
);

/** What an organization said it would send (POST /billing/fund), and the deposit that came for it. */
export const fundRequests = pgTable(
  'fund_requests',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id').notNull(),
    method: text('method').notNull(),
    amountMicro: bigint('amount_micro', { mode: 'number' }).notNull(),
    /** where the money is to go (the deposit address for apusd) */
    address: text('address'),
    /** pending, then received */
    status: text('status').notNull(),
    depositId: text('deposit_id'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    index('fund_requests_pending').on(t.organizationId, t.status, t.amountMicro, t.createdAt),
    ofOrganization('fund_requests', t.organizationId),
  ],
);

/** The card processor's webhook events taken, once each by their id (a redelivery changes nothing). */
export const fiatEvents = pgTable('fiat_events', {
  id: text('id').primaryKey(),
  type: text('type').notNull(),
  paymentIntentId: text('payment_intent_id'),
  receivedAt: bigint('received_at', { mode: 'number' }).notNull(),
});

/**
 * Requests that move money, answered once per organization and Idempotency-Key: a retry with the
 * same body gets the first answer, another body is refused. statusCode is null while the first
 * request is still being answered. Kept 24 h at least (src/domain/billing/idempotency.ts).
 */
export const idempotentRequests = pgTable(
  'idempotent_requests',
  {
    organizationId: text('organization_id').notNull(),
    key: text('key').notNull(),
    /** sha-256 of the method, the path and the body */
    requestHash: text('request_hash').notNull(),
    statusCode: integer('status_code'),
    responseBody: text('response_body'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({ name: 'idempotent_requests_pkey', columns: [t.organizationId, t.key] }),
    index('idempotent_requests_created').on(t.createdAt),
  ],
);
