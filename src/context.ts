import { type ReportSigner, reportSigner } from './report/signature.js';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config.js';
import { deriveKey, loadServerSecret } from './crypto/secret.js';
import { WalletFactory } from './crypto/wallets.js';
import { watermarkKey } from './watermark/keyed-random.js';
import { type ViewerIdKey, viewerIdKey } from './domain/identity/viewer-ids.js';
import { type Database, openDatabase } from './db/database.js';
import type { InvoiceRow, OrganizationRow, Repos } from './db/repos/index.js';
import { createLogger, type Logger } from './log.js';
import { type MediaBinaries, mediaBinaries } from './media/binaries.js';
import { openContentStore } from './storage/config.js';
import type { ContentStore } from './storage/content-store.js';
import { createWebhookFetch } from './domain/webhooks/guarded-fetch.js';
import { type CardProcessor, cardProcessor } from './payments/processor.js';

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
    /** keys the permutation and mask that turn the viewer counter into ids */
    viewerIds: ViewerIdKey;
    /** signs evidence reports (Ed25519; src/report/signature.ts) */
    reports: ReportSigner;
  };
  wallets: WalletFactory;
  /** packaged content: playlists, encrypted segments, thumbnails, previews */
  storage: ContentStore;
  /** Called after an event is committed to the outbox, so a running delivery worker looks at once. */
  wakeWebhooks: () => void;
  /** Outgoing webhook HTTP: connects only where the webhook policy allows at connect time; replaceable in tests. */
  fetch: typeof fetch;
  /** ffmpeg and ffprobe, found once from the environment when the context is made */
  media: MediaBinaries;
  /** the card processor's SDK client, made on first use, when card payments are configured */
  cardProcessor: (() => Promise<CardProcessor>) | undefined;
  /** the ways money comes in that this deployment has configured (none until the funding issue's) */
  funding: Partial<Record<'apusd' | 'fiat_card', FundingMethod>>;
}

/** A way money comes in (APUSD on a chain, card payments), plugged in by the deployment; POST /billing/fund hands it a checked request. */
export interface FundingMethod {
  fund(ctx: Context, org: OrganizationRow, request: FundRequest): Promise<Record<string, unknown>>;
  /** Autopay by this method: charges an issued invoice (attempt 1, 2, …) to the organization's saved payment method. */
  chargeInvoice?(ctx: Context, org: OrganizationRow, invoice: InvoiceRow, attempt: number): Promise<{ paid: boolean; pending?: boolean; reason?: string }>;
}

export interface FundRequest {
  method: 'apusd' | 'fiat_card';
  amountMicro: number;
  /** Shape B: the card processor's payment-intent id */
  paymentIntentId?: string;
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

/**
 * The context with db and repos bound to the database. A transaction's context is made when the
 * transaction starts, from the context as it is then (the delivery worker replaces wakeWebhooks).
 */
function bindDatabase(base: Omit<Context, 'db' | 'repos'>, database: Database): Context {
  const ctx: Context = {
    ...base,
    repos: database.repos,
    db: { ...database, transaction: (fn) => database.transaction((txRepos) => fn(inTransaction(txRepos))) },
  };
  const inTransaction = (txRepos: Repos): Context => {
    const tx: Context = { ...ctx, repos: txRepos, db: { ...ctx.db, repos: txRepos, transaction: (fn) => fn(tx) } };
    return tx;
  };
  return ctx;
}

export interface ContextOverrides {
  clock?: Clock;
  log?: Logger;
  fetch?: typeof fetch;
  media?: MediaBinaries;
  /** Skip migrations on open (`drm migrate` runs them itself and reports). */
  migrate?: boolean;
}

export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<Context> {
  const log = overrides.log ?? createLogger(config.logLevel);
  const secret = loadServerSecret(config.dataDir);
  const clock = overrides.clock ?? systemClock;
  const db = await openDatabase(config.db, { log, clock, migrate: overrides.migrate });
  return bindDatabase(
    {
    config,
    clock,
    log,
    keys: {
      seal: deriveKey(secret, 'seal'),
      adminToken: new Uint8Array(deriveKey(secret, 'admin-token')),
      watermark: watermarkKey(secret),
      viewerIds: viewerIdKey(deriveKey(secret, 'viewer-ids')),
      reports: reportSigner(deriveKey(secret, 'evidence-report')),
    },
    wallets: new WalletFactory(secret),
    storage: openContentStore(config.storage, config.dataDir, deriveKey(secret, 'object-names'), { runsAnalyses: config.analysis }),
    wakeWebhooks: () => {},
    fetch: overrides.fetch ?? createWebhookFetch(config.allowPrivateWebhooks),
    media: overrides.media ?? mediaBinaries(),
    funding: {},
    cardProcessor: config.fiat ? once(() => cardProcessor(config.fiat as NonNullable<Config['fiat']>)) : undefined,
    },
    db,
  );
}

/** A function whose first call's promise every later call gets. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make();
    return made;
  };
}
