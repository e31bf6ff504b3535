import path from 'node:path';
import type { StorageConfig, StoreOptions } from './config.js';
import { ContentStore } from './content-store.js';
import { FileBackend } from './file-backend.js';
import { DiskSpool } from './spool.js';

/**
 * The content store of a deployment: on a disk, its directory holds the items; with an object
 * store, `<data-dir>/content` holds only the staging of ingests and a cache of files ffmpeg reads.
 * Files waiting for a job (leaks, queued sources) are spooled beside the content (spool.ts); a
 * process that runs analyses keeps its own copy of a leak it received for an hour as well. The
 * object store's code, and the AWS SDK with it, is loaded only for an s3:// store.
 */
export async function openContentStore(
  storage: StorageConfig,
  dataDir: string,
  namesKey: Buffer,
  options: StoreOptions = {},
): Promise<ContentStore> {
  const { store } = storage;
  if (store.kind === 'file')
    return new ContentStore(
      store.root,
      new FileBackend(store.root),
      new DiskSpool(path.join(dataDir, 'uploads'), options.clock),
      options.clock,
    );
  const { openS3Store } = await import('./s3-store.js');
  return openS3Store(storage, dataDir, namesKey, options);
}
