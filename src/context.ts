import type { ReportSigner } from './report/signature.js';
import type { SegmentRules } from './watermark/segment-rule.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { WalletFactory } from './crypto/wallets.js';
import type { ViewerIdKey } from './crypto/viewer-id-key.js';
import type { Database } from './db/database.js';
import type { Repos } from './db/repos/index.js';
import type { Logger } from './log.js';
import type { MediaBinaries } from './media/binaries.js';
import type { ContentStore } from './storage/content-store.js';
import type { CardProcessor } from './payments/processor.js';
import type { Bell } from './bell.js';
import type { InvoiceRow, OrganizationRow } from './db/repos/index.js';
import type { PaymentMethodName } from './payments/methods.js';
import type { DtcwtBackend, DtcwtBackendKind } from '../gpu/index.js';

/** Everything a core service needs, built once per process and passed down; no module singletons. */
export interface Context {
  config: Config;
  db: ContextDatabase;
  /** the repositories of this context: the database's, or inside a transaction the transaction's */
  repos: Repos;
  clock: Clock;
  log: Logger;
  keys: {
    /** seals stored secrets (webhook secrets) */
    seal: Buffer;
    /** signs admin session tokens */
    adminToken: Uint8Array;
    /** keys the watermark patterns (the same key `drm watermark` uses) */
    watermark: Buffer;
    /** each content item's segment rule: which bit of an id a segment carries (src/watermark/segment-rule.ts) */
    segmentRules: SegmentRules;
    /** keys the permutation and mask that turn the viewer counter into ids */
    viewerIds: ViewerIdKey;
    /** signs evidence reports (Ed25519; src/report/signature.ts) */
    reports: ReportSigner;
  };
  wallets: WalletFactory;
  /** packaged content: playlists, encrypted segments, thumbnails, previews */
  storage: ContentStore;
  /** Rung after an event is committed to the outbox, so a running delivery worker looks at once. */
  webhookBell: Bell;
  /**
   * Runs fn once the transaction of this context commits (never, if it rolls back); outside a
   * transaction, at once. Work that must follow a commit (ringing the bell) is placed here.
   */
  afterCommit(fn: () => void): void;
  /** Outgoing webhook HTTP: connects only where the webhook policy allows at connect time; replaceable in tests. */
  fetch: typeof fetch;
  /** ffmpeg and ffprobe, found once from the environment when the context is made */
  media: MediaBinaries;
  /** the card processor's SDK client, made on first use, when card payments are configured */
  cardProcessor: (() => Promise<CardProcessor>) | undefined;
  /** every way money comes in and invoices are charged: one module each (src/domain/billing/payment-registry.ts) */
  payments: PaymentMethods;
  /** makes the DTCWT backend watermark work runs on ('auto' unless a command's --backend says otherwise) */
  dtcwt: (kind?: DtcwtBackendKind) => Promise<DtcwtBackend>;
  /** The same context with other parts (a quieter log); its transactions are made from it. */
  derive(parts: Partial<Pick<Context, 'log' | 'clock' | 'fetch'>>): Context;
}

export interface ContextDatabase extends Omit<Database, 'transaction'> {
  /**
   * Runs fn with a context bound to one transaction (its repos, and a db whose transaction joins
   * this one): all of fn's database work commits or none of it does. The outer context's repos
   * and db refuse to work inside, with an error that says so. fn must only do database work: on
   * SQLite the transaction holds the only connection.
   */
  transaction<T>(fn: (tx: Context) => Promise<T>): Promise<T>;
}

/** POST /billing/fund's checked request. */
export interface FundRequest {
  method: PaymentMethodName;
  amountMicro: number;
  /** Shape B: the card processor's payment-intent id */
  paymentIntentId?: string;
  /** the client's Idempotency-Key: the processor's own key for the request derives from it */
  idempotencyKey?: string;
}

/** What an autopay attempt came to. */
export interface InvoiceCharge {
  paid: boolean;
  /** pending at the processor: its event settles the invoice, and charging again could charge twice */
  pending?: boolean;
  reason?: string;
  /** when the next attempt is due (ms from now); none: the method waits for money to arrive instead */
  retryInMs?: number;
}

/** A background pass a method runs in a server (the chain's deposit watcher). */
export interface MethodWatcher {
  start(): void;
  stop(): Promise<void>;
}

/** A way money comes in and invoices are charged: one module each (src/domain/billing/payment-registry.ts). */
export interface PaymentMethod {
  name: PaymentMethodName;
  /** why funding by it is off on this deployment, or undefined when it is on */
  unavailable(config: Config): string | undefined;
  /** POST /billing/fund by this method */
  fund(ctx: Context, org: OrganizationRow, request: FundRequest): Promise<Record<string, unknown>>;
  /** Autopay by this method: pays an issued invoice (attempt 1, 2, …). Failures are answers, not errors. */
  chargeInvoice(ctx: Context, org: OrganizationRow, invoice: InvoiceRow, attempt: number): Promise<InvoiceCharge>;
  /** where its money arrives from, read by a server in the background (undefined: nothing to watch here) */
  watcher?(ctx: Context): MethodWatcher | undefined;
  /** the events its provider pushes (the card processor's signed webhook): the raw body and its signature */
  takeEvent?(ctx: Context, rawBody: string, signature: string | undefined): Promise<Record<string, unknown>>;
}

export type PaymentMethods = Readonly<Record<PaymentMethodName, PaymentMethod>>;
