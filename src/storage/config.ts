import path from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { badRequest } from '../errors.js';
import type { ContentBackend } from './backend.js';
import { ContentStore } from './content-store.js';
import { FileBackend } from './file-backend.js';
import { S3Backend } from './s3-backend.js';
import { DiskSpool, ObjectSpool } from './spool.js';

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

export interface StorageInput {
  store?: string;
  s3Endpoint?: string;
  s3Region?: string;
  segmentDelivery?: string;
}

export function resolveStorageConfig(input: StorageInput, env: NodeJS.ProcessEnv, dataDir: string): StorageConfig {
  const store = parseStore(input.store ?? env.DRM_STORE, path.join(dataDir, 'content'));
  const endpoint = input.s3Endpoint ?? env.DRM_S3_ENDPOINT;
  if (endpoint !== undefined && !/^https?:\/\//.test(endpoint)) throw badRequest(`--s3-endpoint must be an http(s) URL, got ${JSON.stringify(endpoint)}`);
  const delivery = (input.segmentDelivery ?? env.DRM_SEGMENT_DELIVERY ?? 'proxy').toLowerCase();
  if (delivery !== 'proxy' && delivery !== 'redirect') throw badRequest(`--segment-delivery must be proxy or redirect, got ${JSON.stringify(delivery)}`);
  if (delivery === 'redirect' && store.kind !== 's3') throw badRequest('--segment-delivery redirect needs an object store (--store s3://bucket/prefix): a disk has no URLs to redirect to');
  return { store, s3: { endpoint, region: input.s3Region ?? env.DRM_S3_REGION }, segmentDelivery: delivery };
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
  if (!m) throw badRequest(`--store must be file:DIR or s3://bucket/prefix (a bucket name of 3-63 lower-case letters, digits, dots and hyphens), got ${JSON.stringify(raw)}`);
  return { kind: 's3', bucket: m[1] as string, prefix: (m[2] ?? '').replace(/^\/+|\/+$/g, '') };
}

/**
 * An S3 client for a store. Credentials come from the usual AWS environment (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, a profile or a role), never from drm's own flags. Since 3.729 the SDK
 * adds CRC32 checksums to every upload in a trailer of an aws-chunked body; many S3-compatible
 * stores (s3rver among them, older MinIO and Ceph) refuse or mis-store those, so checksums are
 * sent only where the API requires one (WHEN_REQUIRED), as before.
 */
export function s3Client(options: S3Options): S3Client {
  // The pinned SDK supports Node 20; its warning is about releases after January 2027 (README).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return new S3Client({
    region: options.region ?? process.env.AWS_REGION ?? 'us-east-1',
    ...(options.endpoint && { endpoint: options.endpoint, forcePathStyle: true }),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** The content backend a store spec names; `namesKey` keys the object names (from the server secret). */
export function contentBackend(spec: StoreSpec, namesKey: Buffer, options: S3Options = {}, client: S3Client = s3Client(options)): ContentBackend {
  if (spec.kind === 'file') return new FileBackend(spec.root);
  return new S3Backend(client, { bucket: spec.bucket, prefix: spec.prefix }, namesKey);
}

/**
 * The content store of a deployment: on a disk, its directory holds the items; with an object
 * store, `<data-dir>/content` holds only the staging of ingests and a cache of files ffmpeg reads.
 * Files waiting for a job (leaks, queued sources) are spooled beside the content (spool.ts); a
 * process that runs analyses keeps its own copy of a leak it received for an hour as well.
 */
export function openContentStore(storage: StorageConfig, dataDir: string, namesKey: Buffer, options: { runsAnalyses?: boolean } = {}): ContentStore {
  const uploads = path.join(dataDir, 'uploads');
  const { store } = storage;
  if (store.kind === 'file') return new ContentStore(store.root, new FileBackend(store.root), new DiskSpool(uploads));
  const client = s3Client(storage.s3);
  const backend = contentBackend(store, namesKey, storage.s3, client);
  return new ContentStore(path.join(dataDir, 'content'), backend, new ObjectSpool(client, { bucket: store.bucket, prefix: store.prefix }, uploads, options.runsAnalyses));
}
