import {
  type BucketLocationConstraint,
  type CORSRule,
  CreateBucketCommand,
  GetBucketCorsCommand,
  PutBucketCorsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { badRequest } from '../errors.js';
import type { StorageConfig } from './config.js';
import { s3Client } from './s3-store.js';
import { storeError } from './s3-errors.js';

/** The id of drm's own CORS rule: a rerun replaces it, and leaves the bucket's other rules alone. */
export const PLAYER_RULE_ID = 'drm-players';
/** How long a browser may keep a preflight's answer. */
export const CORS_MAX_AGE_SECONDS = 3600;

export interface StoreSetupOptions {
  /** origins allowed to fetch segments, `*` or `https://site.example` (one `*` inside allowed); default `*` */
  origins?: string[];
}

export interface CorsRuleView {
  id: string | null;
  origins: string[];
  methods: string[];
  headers: string[];
  expose: string[];
  maxAgeSeconds: number | null;
}

export type StoreSetup =
  | { kind: 'file'; store: string; changed: false; message: string }
  | {
      kind: 's3';
      store: string;
      endpoint: string;
      bucket: string;
      bucketCreated: boolean;
      /** the bucket's whole CORS configuration as read back after the change */
      cors: CorsRuleView[];
      /** rules of the bucket's that are not drm's, kept as they were */
      otherRules: number;
      /** why named origins may not be enough (see playerRule) */
      note?: string;
    };

/** `*`, or a scheme://host[:port] origin (S3 allows one `*` in it); a trailing slash is dropped. */
export function parseOrigins(raw: string[] | undefined): string[] {
  const origins = raw && raw.length > 0 ? raw : ['*'];
  return [
    ...new Set(
      origins.map((o) => {
        const origin = o.trim().replace(/\/$/, '');
        if (origin === '*') return origin;
        if (!/^https?:\/\/[^/\s?#]+$/.test(origin) || origin.split('*').length > 2) {
          throw badRequest(
            `--origin must be * or an origin such as https://player.example (scheme, host ` +
              `and port, no path; at most one *), got ${JSON.stringify(o)}`,
          );
        }
        return origin;
      }),
    ),
  ];
}

/**
 * What a player in a browser needs from the store: GET and HEAD of segments, a Range header for
 * players that ask for part of one, and the lengths and ETag visible to the page's script.
 */
export function playerRule(origins: string[]): CORSRule {
  return {
    ID: PLAYER_RULE_ID,
    AllowedOrigins: origins,
    AllowedMethods: ['GET', 'HEAD'],
    AllowedHeaders: ['Range'],
    ExposeHeaders: ['Content-Length', 'Content-Range', 'ETag'],
    MaxAgeSeconds: CORS_MAX_AGE_SECONDS,
  };
}

const view = (r: CORSRule): CorsRuleView => ({
  id: r.ID ?? null,
  origins: r.AllowedOrigins ?? [],
  methods: r.AllowedMethods ?? [],
  headers: r.AllowedHeaders ?? [],
  expose: r.ExposeHeaders ?? [],
  maxAgeSeconds: r.MaxAgeSeconds ?? null,
});

// After a cross-origin redirect a browser sends `Origin: null` (the Fetch standard's tainted
// origin), so a named origin matches only while the page shares drm serve's origin.
const NAMED_ORIGINS_NOTE =
  'with --segment-delivery redirect, a player whose page is on another origin ' +
  "than drm serve reaches the store with 'Origin: null' " +
  "after the server's 302 (the browser hides the page's origin), which only '*' " +
  "lets through; named origins serve pages on the server's own origin";

/**
 * Readies an object store for players in browsers: creates the bucket when it is missing and
 * sets drm's CORS rule on it, then reads the configuration back. A disk store has nothing to set
 * up (drm serve sends the segments and its own CORS headers), which is an answer, not an error:
 * one deployment script can run this whatever the store.
 */
export async function setUpStore(
  storage: StorageConfig,
  options: StoreSetupOptions = {},
  client?: S3Client,
): Promise<StoreSetup> {
  const origins = parseOrigins(options.origins);
  const spec = storage.store;
  if (spec.kind === 'file') {
    return {
      kind: 'file',
      store: `file:${spec.root}`,
      changed: false,
      message: 'a disk store has nothing to set up: drm serve sends its segments itself, with its own CORS headers',
    };
  }
  const where = {
    store: `s3://${spec.bucket}${spec.prefix ? `/${spec.prefix}` : ''}`,
    endpoint: storage.s3.endpoint ?? 'AWS S3',
    bucket: spec.bucket,
  };
  const s3 = client ?? s3Client(storage.s3);
  const step = async <T>(doing: string, call: () => Promise<T>) => {
    try {
      return await call();
    } catch (err) {
      throw storeError(err, where, doing);
    }
  };
  const existing = await step("reading the bucket's CORS", () => currentRules(s3, spec.bucket));
  const bucketCreated = existing === 'no bucket';
  if (bucketCreated) await step('creating the bucket', () => createBucket(s3, spec.bucket));
  const others = existing === 'no bucket' ? [] : existing.filter((r) => r.ID !== PLAYER_RULE_ID);
  const rules = [...others, playerRule(origins)];
  await step("setting the bucket's CORS", () =>
    s3.send(new PutBucketCorsCommand({ Bucket: spec.bucket, CORSConfiguration: { CORSRules: rules } })),
  );
  const readBack = await step("reading the bucket's CORS back", () => currentRules(s3, spec.bucket));
  const cors = readBack === 'no bucket' ? [] : readBack.map(view);
  // A store that accepts the call and keeps nothing would leave players failing with no clue why.
  if (!cors.some((r) => r.id === PLAYER_RULE_ID || sameOrigins(r.origins, origins))) {
    throw storeError(
      new Error('the store accepted the CORS configuration but does not return it'),
      where,
      "checking the bucket's CORS",
    );
  }
  const note = origins.includes('*') ? undefined : NAMED_ORIGINS_NOTE;
  return { kind: 's3', ...where, bucketCreated, cors, otherRules: others.length, ...(note && { note }) };
}

const sameOrigins = (a: string[], b: string[]) => a.length === b.length && a.every((o) => b.includes(o));

/** The bucket's CORS rules ([] when it has none), or 'no bucket'. */
async function currentRules(s3: S3Client, bucket: string): Promise<CORSRule[] | 'no bucket'> {
  try {
    return (await s3.send(new GetBucketCorsCommand({ Bucket: bucket }))).CORSRules ?? [];
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name === 'NoSuchCORSConfiguration') return [];
    if (name === 'NoSuchBucket') return 'no bucket';
    throw err;
  }
}

async function createBucket(s3: S3Client, bucket: string): Promise<void> {
  // AWS wants the region named for any bucket outside us-east-1; S3-compatible stores ignore it.
  const region = await s3.config.region();
  const where =
    region && region !== 'us-east-1'
      ? { CreateBucketConfiguration: { LocationConstraint: region as BucketLocationConstraint } }
      : {};
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket, ...where }));
  } catch (err) {
    // Another run made it meanwhile: it is ours all the same.
    if ((err as { name?: string }).name !== 'BucketAlreadyOwnedByYou') throw err;
  }
}
