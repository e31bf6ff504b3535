import path from 'node:path';
import type { Clock } from '../clock.js';
import { badRequest } from '../errors.js';

export type StoreSpec = { kind: 'file'; root: string } | { kind: 's3'; bucket: string; prefix: string };

export interface S3Options {
  /** an S3-compatible endpoint (MinIO, s3rver, R2…); AWS's own when left out */
  endpoint?: string;
  region?: string;
}

export type SegmentDelivery = 'proxy' | 'redirect';

/** Where content lives and how players get its segments (flags and their environment variables). */
export interface StorageConfig {
  store: StoreSpec;
  s3: S3Options;
  /** proxy: the server streams each segment; redirect: a 302 to a presigned URL of the store (an object store only) */
  segmentDelivery: SegmentDelivery;
}

export interface StoreOptions {
  /** a process that runs analyses keeps its own copy of a leak it received */
  runsAnalyses?: boolean;
  /** ages of spooled files and leftovers are measured on the context's clock */
  clock?: Clock;
}

export interface StorageInput {
  store?: string;
  s3Endpoint?: string;
  s3Region?: string;
  segmentDelivery?: string;
}

export function resolveStorageConfig(input: StorageInput, env: NodeJS.ProcessEnv, dataDir: string): StorageConfig {
  const store = parseStore(input.store ?? env.DRM_STORE, path.join(dataDir, 'content'));
  const endpoint = input.s3Endpoint ?? env.DRM_S3_ENDPOINT;
  if (endpoint !== undefined && !/^https?:\/\//.test(endpoint))
    throw badRequest(`--s3-endpoint must be an http(s) URL, got ${JSON.stringify(endpoint)}`);
  const delivery = (input.segmentDelivery ?? env.DRM_SEGMENT_DELIVERY ?? 'proxy').toLowerCase();
  if (delivery !== 'proxy' && delivery !== 'redirect')
    throw badRequest(`--segment-delivery must be proxy or redirect, got ${JSON.stringify(delivery)}`);
  if (delivery === 'redirect' && store.kind !== 's3')
    throw badRequest(
      '--segment-delivery redirect needs an object store (--store ' +
        's3://bucket/prefix): a disk has no URLs to redirect to',
    );
  return {
    store,
    s3: { endpoint, region: input.s3Region ?? env.DRM_S3_REGION ?? env.AWS_REGION },
    segmentDelivery: delivery,
  };
}

/** `--store file:DIR` or `--store s3://bucket/prefix` (default: the data directory's content/). */
export function parseStore(raw: string | undefined, defaultRoot: string): StoreSpec {
  if (raw === undefined || raw === '') return { kind: 'file', root: defaultRoot };
  if (raw.startsWith('file:')) {
    const root = raw.slice('file:'.length);
    if (!root) throw badRequest('--store file: needs a directory, e.g. file:/srv/drm/content');
    return { kind: 'file', root };
  }
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw);
  if (!m)
    throw badRequest(
      `--store must be file:DIR or s3://bucket/prefix (a bucket name of 3-63 ` +
        `lower-case letters, digits, dots and hyphens), got ${JSON.stringify(raw)}`,
    );
  return { kind: 's3', bucket: m[1] as string, prefix: (m[2] ?? '').replace(/^\/+|\/+$/g, '') };
}
