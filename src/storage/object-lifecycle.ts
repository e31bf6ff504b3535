import fs from 'node:fs';
import type { S3Backend } from './s3-backend.js';
import { abandonedStagings, type ItemLifecycle, makeStagingDir, type Staging } from './staging.js';
import { type Clock, systemClock } from '../clock.js';

/** Objects of publishes killed midway, and published items without a catalog row, are swept once this old. */
const SWEEP_AFTER_MS = 60 * 60 * 1000;

/**
 * Items in an object store: built in a local staging directory (ffmpeg writes files), then
 * uploaded with the manifest last. The local staging is removed once the upload is done.
 */
export class ObjectLifecycle implements ItemLifecycle {
  /** when this process last listed the bucket for leftovers (0: never) */
  private lastBucketSweep = 0;

  constructor(
    private readonly localRoot: string,
    private readonly backend: S3Backend,
    private readonly clock: Clock = systemClock,
  ) {}

  stage(id: string): Staging {
    const dir = makeStagingDir(this.localRoot, id);
    let published = false;
    return {
      id,
      dir,
      publish: async () => {
        await this.backend.publish(id, dir);
        published = true;
        fs.rmSync(dir, { recursive: true, force: true });
        return id;
      },
      committed: () => {},
      discard: async () => {
        if (published) await this.backend.remove(id);
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }

  /**
   * An object store has no rename to set an item aside with: it stays readable until the rows are
   * gone (a forced delete has ended its sessions by then), and `purge` removes it, manifest first.
   */
  setAside(storagePath: string) {
    return { purge: () => this.backend.remove(storagePath), restore: () => {} };
  }

  /**
   * Local stagings of dead ingests; then objects without a manifest and published items that
   * never got a catalog row. The bucket is listed whole for the latter, so at most once an hour
   * per process (a worker's or server's hourly sweep, or a one-off `drm ingest`'s first).
   */
  async sweep(
    isCatalogued: (id: string) => Promise<boolean>,
    beforeRemoving: (id: string) => Promise<void>,
  ): Promise<string[]> {
    const removed: string[] = [];
    for (const { id, dir } of abandonedStagings(this.localRoot)) {
      await beforeRemoving(id);
      fs.rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    }
    if (this.clock.now() - this.lastBucketSweep < SWEEP_AFTER_MS) return removed;
    this.lastBucketSweep = this.clock.now();
    await this.backend.sweep(SWEEP_AFTER_MS);
    const cutoff = this.clock.now() - SWEEP_AFTER_MS;
    for await (const item of this.backend.published()) {
      if (item.at >= cutoff || (await isCatalogued(item.id))) continue;
      await beforeRemoving(item.id);
      await this.backend.remove(item.id);
      removed.push(`${this.backend.location}/${item.id}`);
    }
    return removed;
  }
}
