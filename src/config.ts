import path from 'node:path';
import { type ChainConfig, type ChainInput, resolveChainConfig } from './chain/config.js';
import { DrmError } from './errors.js';
import { parseSwitch } from './switch.js';
import { type FiatConfig, type FiatInput, resolveFiatConfig } from './payments/config.js';
import type { LogLevel } from './log.js';
import { resolveStorageConfig, type StorageConfig, type StorageInput } from './storage/config.js';

export type ApiShape = 'a' | 'b';

/** Everything a deployment can set; read once at the edge (flags + environment), then passed down. */
export interface Config {
  port: number;
  host: string;
  /** `sqlite:PATH` or `postgres://…` */
  db: string;
  dataDir: string;
  apiShape: ApiShape;
  trustProxy: boolean;
  allowPrivateWebhooks: boolean;
  /** When set, SIWE messages must name this URL's host instead of the Host header. */
  publicUrl?: string;
  logLevel: LogLevel;
  /** Wallets granted admin by the environment, in addition to `drm admin grant`. */
  adminWallets: string[];
  /** JSON request bodies above this size get 413 PAYLOAD_TOO_LARGE. */
  maxJsonBytes: number;
  /** Run the webhook delivery worker inside this process. */
  webhookWorker: boolean;
  /** The largest leak POST /forensics/analyze accepts (default 4 GiB). */
  maxUploadBytes: number;
  /** Run leak analyses in this process (false: `drm serve --no-analysis`, leaving them to `drm worker`). */
  analysis: boolean;
  /** Leak analyses this process runs at once (1 or 2), so that streaming stays fast meanwhile. */
  analysisConcurrency: number;
  /**
   * How long a case taken by a server that stopped answering waits before another server (or this one, restarted) takes
   * it.
   */
  analysisLeaseMs: number;
  /** Registrations one client IP may make per clock hour (POST /auth/register is open). */
  registerLimitPerHour: number;
  /** Sign-in nonces one client IP may ask for per clock hour (GET /admin/auth/nonce is open). */
  nonceLimitPerHour: number;
  /** Unused, unexpired sign-in nonces allowed at once (each lives 10 minutes). */
  maxOutstandingNonces: number;
  /** APUSD deposits on an EVM chain (src/chain/config.ts); undefined: not configured */
  chain?: ChainConfig;
  /** card payments through the processor (src/payments/config.ts); undefined: not configured */
  fiat?: FiatConfig;
  /** where content lives and how segments reach players (src/storage/config.ts) */
  storage: StorageConfig;
  /** the identification figure at or below which a verdict names one viewer (`--strong-below`, default 1e-6) */
  strongBelow: number;
  /** how long a case keeps the leak it analysed after it ended (`--keep-leaks`, default 90 days; 0: deleted at once) */
  keepLeaksMs: number;
  /**
   * how long after a month ends the period closer waits before issuing its invoices (`--invoice-grace`, default 1 h)
   */
  invoiceGraceMs: number;
  /** how long a balance may stay below zero before new sessions are refused (`--negative-grace`, default 72 h) */
  negativeGraceMs: number;
}

/** Option values as they come from commander (strings) — every one also has an environment variable. */
export interface ConfigInput extends ChainInput, FiatInput, StorageInput {
  port?: string | number;
  host?: string;
  db?: string;
  dataDir?: string;
  apiShape?: string;
  trustProxy?: boolean;
  allowPrivateWebhooks?: boolean;
  publicUrl?: string;
  logLevel?: string;
  webhookWorker?: boolean;
  analysis?: boolean;
  /** bytes, or with a unit: 500M, 4G */
  maxUpload?: string;
  analysisConcurrency?: string | number;
  registerLimit?: string | number;
  nonceLimit?: string | number;
  strongBelow?: string | number;
  keepLeaks?: string;
  /** a duration: 1h, 30m, 90s, 2d or 0 */
  invoiceGrace?: string;
  /** a duration: 72h, 3d or 0 */
  negativeGrace?: string;
}

/** "4G", "500M", "64k" or plain bytes. */
export function parseByteSize(raw: string, what: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$/i.exec(raw);
  if (!m) throw new DrmError('BAD_REQUEST', `${what} must be a size such as 4G, 500M or 1048576, got "${raw}"`);
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[(m[2] as string).toLowerCase()] as number;
  const bytes = Math.floor(Number(m[1]) * unit);
  if (!(bytes >= 1)) throw new DrmError('BAD_REQUEST', `${what} must be at least 1 byte`);
  return bytes;
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'];

function flag(v: boolean | undefined, env: string | undefined, what: string, byDefault = false): boolean {
  if (v !== undefined) return v;
  return env === undefined || env === '' ? byDefault : parseSwitch(env, what);
}

function analysisConcurrency(raw: string | number): number {
  const n = Number(raw);
  if (n !== 1 && n !== 2) throw new DrmError('BAD_REQUEST', `--analysis-concurrency must be 1 or 2, got "${raw}"`);
  return n;
}

function analysisLease(raw: string): number {
  const seconds = Number(raw);
  if (!Number.isInteger(seconds) || seconds < 5 || seconds > 86_400) {
    throw new DrmError(
      'BAD_REQUEST',
      `DRM_ANALYSIS_LEASE_SECONDS must be a whole number of seconds from 5 to 86400, got "${raw}"`,
    );
  }
  return seconds * 1000;
}

function perHourLimit(raw: string | number, what: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) {
    throw new DrmError(
      'BAD_REQUEST',
      `${what} must be a whole number of requests per hour from 1 to 1000000, got "${raw}"`,
    );
  }
  return n;
}

/** "90d", "36h" or "0": how long leaks are kept, at most ten years. */
function keepLeaks(raw: string): number {
  const m = /^\s*(\d+)\s*([dh]?)\s*$/.exec(raw);
  const ms = m ? Number(m[1]) * (m[2] === 'h' ? 3600_000 : 86_400_000) : Number.NaN;
  if (!m || (m[2] === '' && m[1] !== '0') || !(ms <= 3650 * 86_400_000)) {
    throw new DrmError(
      'BAD_REQUEST',
      `--keep-leaks must be a number of days or hours such as 90d or 36h (or 0), at most 3650d, got "${raw}"`,
    );
  }
  return ms;
}

/**
 * "1h", "30m", "90s", "2d" or "0": how long a month's invoices wait after it ends, so that what
 * lands in the last moments (a session committed as the month closed) is on its own invoice. At
 * most 7 days: a grace is for stragglers, not for holding invoices back.
 */
function invoiceGrace(raw: string): number {
  return duration(raw, '--invoice-grace', 7);
}

/**
 * "72h", "3d", "0": how long a balance may stay below zero (money taken back after it was spent)
 * before new sessions are refused. At most 30 days.
 */
function negativeGrace(raw: string): number {
  return duration(raw, '--negative-grace', 30);
}

/** "1h", "30m", "90s", "2d" or "0", at most maxDays days. */
function duration(raw: string, flag: string, maxDays: number): number {
  const m = /^\s*(\d+)\s*([smhd]?)\s*$/.exec(raw);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m?.[2] as 's'] ?? 0;
  const ms = m ? Number(m[1]) * unit : Number.NaN;
  if (!m || (m[2] === '' && m[1] !== '0') || !(ms <= maxDays * 86_400_000)) {
    throw new DrmError(
      'BAD_REQUEST',
      `${flag} must be a duration such as 1h, 30m or 90s (or 0), at most ${maxDays}d, got "${raw}"`,
    );
  }
  return ms;
}

/** A court reads the figure: no deployment may name anyone on worse than one in a thousand. */
function strongBelow(raw: string | number): number {
  const p = Number(raw);
  if (!Number.isFinite(p) || p < 1e-12 || p > 1e-3) {
    throw new DrmError('BAD_REQUEST', `--strong-below must be a probability from 1e-12 to 1e-3, got "${raw}"`);
  }
  return p;
}

export function resolveConfig(input: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = path.resolve(input.dataDir ?? env.DRM_DATA_DIR ?? './drm-data');
  const db = input.db ?? env.DRM_DB ?? `sqlite:${path.join(dataDir, 'drm.db')}`;
  if (!db.startsWith('sqlite:') && !/^postgres(ql)?:\/\//.test(db)) {
    throw new DrmError('BAD_REQUEST', `--db must be sqlite:PATH or postgres://…, got "${db}"`);
  }
  const port = Number(input.port ?? env.DRM_PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new DrmError('BAD_REQUEST', `--port must be a port number, got "${input.port ?? env.DRM_PORT}"`);
  }
  const apiShape = (input.apiShape ?? env.DRM_API_SHAPE ?? 'b').toLowerCase();
  if (apiShape !== 'a' && apiShape !== 'b') {
    throw new DrmError('BAD_REQUEST', `--api-shape must be a or b, got "${apiShape}"`);
  }
  const logLevel = (input.logLevel ?? env.DRM_LOG_LEVEL ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new DrmError('BAD_REQUEST', `--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const publicUrl = input.publicUrl ?? env.DRM_PUBLIC_URL;
  if (publicUrl !== undefined && !URL.canParse(publicUrl)) {
    throw new DrmError('BAD_REQUEST', `--public-url must be a URL, got "${publicUrl}"`);
  }
  return {
    port,
    host: input.host ?? env.DRM_HOST ?? '127.0.0.1',
    db,
    dataDir,
    apiShape,
    trustProxy: flag(input.trustProxy, env.DRM_TRUST_PROXY, 'DRM_TRUST_PROXY'),
    allowPrivateWebhooks: flag(
      input.allowPrivateWebhooks,
      env.DRM_ALLOW_PRIVATE_WEBHOOKS,
      'DRM_ALLOW_PRIVATE_WEBHOOKS',
    ),
    publicUrl,
    logLevel: logLevel as LogLevel,
    adminWallets: (env.DRM_ADMIN_WALLETS ?? '')
      .split(',')
      .map((w) => w.trim().toLowerCase())
      .filter(Boolean),
    maxJsonBytes: 1024 * 1024,
    webhookWorker: flag(input.webhookWorker, env.DRM_WEBHOOK_WORKER, 'DRM_WEBHOOK_WORKER', true),
    maxUploadBytes: parseByteSize(input.maxUpload ?? env.DRM_MAX_UPLOAD ?? '4G', '--max-upload'),
    analysis: flag(input.analysis, env.DRM_ANALYSIS, 'DRM_ANALYSIS', true),
    analysisConcurrency: analysisConcurrency(input.analysisConcurrency ?? env.DRM_ANALYSIS_CONCURRENCY ?? 1),
    analysisLeaseMs: analysisLease(env.DRM_ANALYSIS_LEASE_SECONDS ?? '120'),
    registerLimitPerHour: perHourLimit(input.registerLimit ?? env.DRM_REGISTER_LIMIT ?? 20, '--register-limit'),
    nonceLimitPerHour: perHourLimit(input.nonceLimit ?? env.DRM_NONCE_LIMIT ?? 60, '--nonce-limit'),
    maxOutstandingNonces: 10_000,
    chain: resolveChainConfig(input, env),
    fiat: resolveFiatConfig(input, env),
    storage: resolveStorageConfig(input, env, dataDir),
    strongBelow: strongBelow(input.strongBelow ?? env.DRM_STRONG_BELOW ?? 1e-6),
    keepLeaksMs: keepLeaks(input.keepLeaks ?? env.DRM_KEEP_LEAKS ?? '90d'),
    invoiceGraceMs: invoiceGrace(input.invoiceGrace ?? env.DRM_INVOICE_GRACE ?? '1h'),
    negativeGraceMs: negativeGrace(input.negativeGrace ?? env.DRM_NEGATIVE_GRACE ?? '72h'),
  };
}
