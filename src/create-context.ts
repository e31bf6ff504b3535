import { reportSigner } from './report/signature.js';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config.js';
import type { Context } from './context.js';
import { deriveKey, loadServerSecret } from './crypto/secret.js';
import { WalletFactory } from './crypto/wallets.js';
import { watermarkKey } from './watermark/keyed-random.js';
import { SegmentRules, segmentRuleKey } from './watermark/segment-rule.js';
import { viewerIdKey } from './crypto/viewer-id-key.js';
import { type Database, openDatabase } from './db/database.js';
import { createLogger, type Logger } from './log.js';
import { type MediaBinaries, mediaBinaries } from './media/binaries.js';
import { openContentStore } from './storage/open.js';
import { createWebhookFetch } from './domain/webhooks/guarded-fetch.js';
import { cardProcessor } from './payments/processor.js';
import { Bell } from './bell.js';
import { paymentMethods } from './domain/billing/payment-registry.js';

// The one place a Context is made: complete at once (the payment methods, the DTCWT backend
// maker, the bell), never added to afterwards. Apart from ./context.ts, which only describes it,
// so that the modules the context holds may name its type without an import circle.

type ContextParts = Omit<Context, 'db' | 'repos' | 'afterCommit' | 'derive'>;

/** The context with db and repos bound to the database; its transactions are made from it. */
function bindDatabase(parts: ContextParts, database: Database): Context {
  const ctx: Context = {
    ...parts,
    repos: database.repos,
    afterCommit: (fn) => fn(),
    db: { ...database, transaction: (fn) => inTransaction(ctx, database, fn) },
    derive: (more) => bindDatabase({ ...parts, ...more }, database),
  };
  return ctx;
}

/**
 * Runs fn with the caller's context bound to one transaction. What fn places with afterCommit
 * runs after the commit; an attempt the database runs again (a serialization failure) starts
 * with none placed.
 */
async function inTransaction<T>(caller: Context, database: Database, fn: (tx: Context) => Promise<T>): Promise<T> {
  let placed: (() => void)[] = [];
  const result = await database.transaction((txRepos) => {
    placed = [];
    const tx: Context = {
      ...caller,
      repos: txRepos,
      afterCommit: (after) => void placed.push(after),
      db: { ...caller.db, repos: txRepos, transaction: (inner) => inner(tx) },
    };
    return fn(tx);
  });
  for (const after of placed) {
    try {
      after();
    } catch (err) {
      // the transaction has committed: what follows it must not turn its success into an error
      caller.log.error('work after a commit failed', { err: String(err) });
    }
  }
  return result;
}

export interface ContextOverrides {
  clock?: Clock;
  log?: Logger;
  fetch?: typeof fetch;
  media?: MediaBinaries;
  dtcwt?: Context['dtcwt'];
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
        segmentRules: new SegmentRules(segmentRuleKey(secret)),
        viewerIds: viewerIdKey(deriveKey(secret, 'viewer-ids')),
        reports: reportSigner(deriveKey(secret, 'evidence-report')),
      },
      wallets: new WalletFactory(secret),
      storage: await openContentStore(config.storage, config.dataDir, deriveKey(secret, 'object-names'), {
        runsAnalyses: config.analysis,
        clock,
      }),
      webhookBell: new Bell(),
      fetch: overrides.fetch ?? createWebhookFetch(config.allowPrivateWebhooks),
      media: overrides.media ?? mediaBinaries(),
      payments: paymentMethods,
      // loaded when first asked for: most commands never watermark
      dtcwt:
        overrides.dtcwt ??
        ((kind) =>
          import('../gpu/index.js').then((gpu) =>
            gpu.createDtcwtBackend(gpu.backendKind(kind), { onWarning: (message) => log.warn(message) }),
          )),
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
