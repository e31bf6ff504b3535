import path from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import type { ContentBackend } from './backend.js';
import type { S3Options, StorageConfig, StoreOptions, StoreSpec } from './config.js';
import { ContentStore } from './content-store.js';
import { FileBackend } from './file-backend.js';
import { ObjectSpool } from './object-spool.js';
import { S3Backend } from './s3-backend.js';

// The object store's half of opening the content store: loaded only for an s3:// store, so that
// a deployment on a disk never loads the AWS SDK.

/**
 * An S3 client for a store. Credentials come from the usual AWS environment (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, a profile or a role), never from drm's own flags. Since 3.729 the SDK
 * adds CRC32 checksums to every upload in a trailer of an aws-chunked body; many S3-compatible
 * stores (s3rver among them, older MinIO and Ceph) refuse or mis-store those, so checksums are
 * sent only where the API requires one (WHEN_REQUIRED), as before.
 */
export function s3Client(options: S3Options): S3Client {
  return new S3Client({
    region: options.region ?? 'us-east-1',
    ...(options.endpoint && { endpoint: options.endpoint, forcePathStyle: true }),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** The content backend a store spec names; `namesKey` keys the object names (from the server secret). */
export function contentBackend(
  spec: StoreSpec,
  namesKey: Buffer,
  options: S3Options = {},
  client: S3Client = s3Client(options),
): ContentBackend {
  if (spec.kind === 'file') return new FileBackend(spec.root);
  return new S3Backend(client, { bucket: spec.bucket, prefix: spec.prefix }, namesKey);
}

/** The content store on an object store (./open.ts opens a disk store itself). */
export function openS3Store(
  storage: StorageConfig,
  dataDir: string,
  namesKey: Buffer,
  options: StoreOptions,
): ContentStore {
  const store = storage.store as Extract<StoreSpec, { kind: 's3' }>;
  const client = s3Client(storage.s3);
  const backend = new S3Backend(client, { bucket: store.bucket, prefix: store.prefix }, namesKey, options.clock);
  const spool = new ObjectSpool(
    client,
    { bucket: store.bucket, prefix: store.prefix },
    path.join(dataDir, 'uploads'),
    options.runsAnalyses,
    options.clock,
  );
  return new ContentStore(path.join(dataDir, 'content'), backend, spool, options.clock);
}
