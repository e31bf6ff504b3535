import fs from 'node:fs';
import path from 'node:path';
import { type CORSRule, GetBucketCorsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { StorageConfig } from '../storage/config.js';
import { s3Client } from '../storage/s3-store.js';
import { storeError } from '../storage/s3-errors.js';
import { PLAYER_RULE_ID } from '../storage/setup.js';
import type { Check } from './check.js';

/**
 * A store that has not answered in this long is reported, rather than holding drm doctor up (a firewall that drops
 * packets).
 */
const ANSWER_WITHIN_MS = 10_000;

const CREDENTIALS_FIX =
  'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or a role) to a key of the store';
const REFUSED_CREDENTIALS = new Set([
  'CredentialsProviderError',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
]);

interface Where {
  store: string;
  endpoint: string;
  bucket: string;
  prefix: string;
}

type Failure = Pick<Check, 'detail' | 'fix'>;

/**
 * The content store of `--store`: a disk's directory exists or can be made, and is writable; an
 * object store's bucket answers with these credentials, and, where segments are redirected to
 * it, carries the CORS rule players in browsers need. `client` stands in for the store's own
 * client in tests.
 */
export async function storeChecks(storage: StorageConfig, client?: S3Client): Promise<Check[]> {
  const spec = storage.store;
  if (spec.kind === 'file') return [diskCheck(spec.root)];
  const where: Where = {
    store: `s3://${spec.bucket}${spec.prefix ? `/${spec.prefix}` : ''}`,
    endpoint: storage.s3.endpoint ?? 'AWS S3',
    bucket: spec.bucket,
    prefix: spec.prefix,
  };
  const s3 = client ?? s3Client(storage.s3);
  try {
    const bucket = await bucketCheck(s3, where);
    // Without redirect the store never meets a browser: drm serve sends the segments, with its own CORS headers.
    if (bucket.status !== 'ok' || storage.segmentDelivery !== 'redirect') return [bucket];
    return [bucket, await corsCheck(s3, where)];
  } finally {
    if (!client) s3.destroy();
  }
}

const within = () => ({ abortSignal: AbortSignal.timeout(ANSWER_WITHIN_MS) });

/** One key listed under the prefix: what every ingest and sweep needs (ListBucket), unlike HeadBucket. */
async function bucketCheck(s3: S3Client, where: Where): Promise<Check> {
  const name = 'content store';
  try {
    const listed = await s3.send(
      new ListObjectsV2Command({
        Bucket: where.bucket,
        Prefix: where.prefix ? `${where.prefix}/` : undefined,
        MaxKeys: 1,
      }),
      within(),
    );
    return {
      name,
      status: 'ok',
      detail:
        `${where.store} at ${where.endpoint} answers ` +
        `(${listed.KeyCount ? 'content under the prefix' : 'nothing under the prefix yet'})`,
    };
  } catch (err) {
    return { name, status: 'fail', ...failure(err, where, 'listing the bucket') };
  }
}

/**
 * drm's own rule (drm storage setup's): without it every browser refuses the redirected segments.
 * A warning, not a failure: players outside browsers (apps, ffmpeg) need no CORS, and a store
 * configured by hand may let browsers in by a rule of another name.
 */
async function corsCheck(s3: S3Client, where: Where): Promise<Check> {
  const name = 'bucket CORS';
  const warn = (detail: string, fix: string): Check => ({ name, status: 'warn', detail, fix });
  let rules: CORSRule[];
  try {
    rules = (await s3.send(new GetBucketCorsCommand({ Bucket: where.bucket }), within())).CORSRules ?? [];
  } catch (err) {
    const code = (err as { name?: string }).name;
    if (code !== 'NoSuchCORSConfiguration') {
      const f = failure(err, where, "reading the bucket's CORS");
      return warn(
        f.detail,
        code === 'NotImplemented'
          ? "set CORS in the store's own settings, or serve segments by proxy (--segment-delivery proxy)"
          : (f.fix ?? ''),
      );
    }
    rules = [];
  }
  const rule = rules.find((r) => r.ID === PLAYER_RULE_ID);
  if (!rule) {
    const others = rules.length > 0 ? ` (it has ${rules.length} other rule${rules.length === 1 ? '' : 's'})` : '';
    return warn(
      `no CORS rule ${PLAYER_RULE_ID} on bucket ${where.bucket}${others}: with ` +
        `--segment-delivery redirect, browsers refuse every segment`,
      'run drm storage setup',
    );
  }
  const origins = rule.AllowedOrigins ?? [];
  // After the server's cross-origin 302 a browser sends `Origin: null` (storage setup's note): only * admits it.
  if (!origins.includes('*')) {
    return warn(
      `rule ${PLAYER_RULE_ID} allows ${origins.join(', ')}: pages on another origin ` +
        `than drm serve reach the store with Origin: null after the 302, which only * lets in`,
      'run drm storage setup without --origin (it allows *)',
    );
  }
  return {
    name,
    status: 'ok',
    detail:
      `rule ${PLAYER_RULE_ID} lets players in browsers fetch redirected segments ` +
      `(${(rule.AllowedMethods ?? []).join(', ')} from *)`,
  };
}

/** A store's refusal: the sentence of storage/s3-errors.ts, and the one thing to do about it. */
function failure(err: unknown, where: Where, doing: string): Failure {
  const e = (err ?? {}) as { name?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  // A missing bucket is the usual state of a new deployment, and storeError has no words for it.
  if (e.name === 'NoSuchBucket' || e.name === 'NotFound') {
    return {
      detail: `${where.store}: the bucket ${where.bucket} does not exist at ${where.endpoint}`,
      fix: 'run drm storage setup (it creates the bucket, and the CORS rule players in browsers need)',
    };
  }
  if (e.name === 'AbortError' || e.name === 'TimeoutError') {
    return {
      detail: `${where.store}: ${doing}: ${where.endpoint} did not answer within ${ANSWER_WITHIN_MS / 1000} s`,
      fix: 'start the store, or correct --s3-endpoint (DRM_S3_ENDPOINT); a firewall may be dropping the connection',
    };
  }
  const detail = storeError(err, where, doing).message;
  if (REFUSED_CREDENTIALS.has(e.name ?? '')) return { detail, fix: CREDENTIALS_FIX };
  if (status === undefined) return { detail, fix: 'start the store, or correct --s3-endpoint (DRM_S3_ENDPOINT)' };
  if (status === 403)
    return {
      detail,
      fix:
        'let these credentials list, read, write and delete objects in the bucket ' +
        '(s3:ListBucket, GetObject, PutObject, DeleteObject)',
    };
  return { detail, fix: "see the store's own log for this refusal" };
}

/** A disk store: the directory, or the nearest existing folder above it (drm creates the rest), must be writable. */
function diskCheck(root: string): Check {
  const name = 'content store';
  const dir = path.resolve(root);
  let existing = dir;
  while (!fs.existsSync(existing)) existing = path.dirname(existing);
  if (!fs.statSync(existing).isDirectory()) {
    return {
      name,
      status: 'fail',
      detail: `file:${root}: ${existing} is a file, not a directory`,
      fix: '--store file:DIR (DRM_STORE) naming a directory',
    };
  }
  let writable = true;
  try {
    fs.accessSync(existing, fs.constants.W_OK);
  } catch {
    writable = false;
  }
  if (existing === dir) {
    return writable
      ? { name, status: 'ok', detail: `file:${root} is writable` }
      : {
          name,
          status: 'fail',
          detail: `file:${root} is not writable`,
          fix: `chown or chmod ${dir} for the user drm runs as`,
        };
  }
  return writable
    ? {
        name,
        status: 'ok',
        detail: `file:${root} does not exist yet; drm creates it (in ${existing}, which is writable)`,
      }
    : {
        name,
        status: 'fail',
        detail: `file:${root} does not exist, and ${existing} is not writable to create it in`,
        fix: `mkdir -p ${dir} and chown it to the user drm runs as`,
      };
}
