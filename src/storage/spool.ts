import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DrmError } from '../errors.js';
import type { PutOptions } from './s3-upload.js';
import { type Clock, systemClock } from '../clock.js';

/**
 * Where files wait for a job: a leak for its analysis, a source for its queued ingest. A row
 * keeps the reference `keep` returns, and whichever machine takes the job reads the file back
 * with `fetch`: on a disk store the file sits in `<data-dir>/uploads` (one machine); with an
 * object store it is an object under `<prefix>/.spool/`, so a worker anywhere can take the job.
 */
export interface Spool {
  /** where new files are received before they are kept (`<data-dir>/uploads`) */
  readonly localDir: string;
  /** Keeps a file: `move` hands the file over (it is gone from its path), otherwise it is copied. */
  keep(file: string, options: KeepOptions): Promise<string>;
  /**
   * The kept file as a path to read, and `release` for the copy fetched (nothing on a disk); `signal` stops a download.
   */
  fetch(ref: string, signal?: AbortSignal): Promise<{ path: string; release(): void }>;
  remove(ref: string): Promise<void>;
  /** Removes kept files older than `olderThanMs` that no job owns (a process died between keeping and queueing). */
  sweep(olderThanMs: number, isOwned: (ref: string) => Promise<boolean>): Promise<number>;
}

export interface KeepOptions extends PutOptions {
  move: boolean;
}

export const OBJECT_REF = 'spool:';

/** How long a process keeps its own copy of a leak it sent to an object spool, for its own queue to read. */
export const LOCAL_COPY_MS = 3600_000;

/**
 * Refs name their store: a disk's ref is a path, an object's starts with `spool:`. The message
 * may reach the organization as a case's failure reason, so it names no path and no bucket.
 */
export function wrongStore(ref: string, here: 'a disk store' | 'an object store'): DrmError {
  const where = ref.startsWith(OBJECT_REF) ? 'an object store' : 'the disk of the machine that received it';
  return new DrmError(
    'INTERNAL_ERROR',
    `the file of this job is in ${where}, and this process uses ${here} (check --store)`,
  );
}

export function freshName(file: string): string {
  return `${randomUUID()}${path
    .extname(file)
    .slice(0, 12)
    .replace(/[^.a-zA-Z0-9]/g, '')}`;
}

/** The spool of a disk store: the uploads directory of the data directory. */
export class DiskSpool implements Spool {
  constructor(
    readonly localDir: string,
    private readonly clock: Clock = systemClock,
  ) {}

  async keep(file: string, options: KeepOptions): Promise<string> {
    fs.mkdirSync(this.localDir, { recursive: true, mode: 0o700 });
    if (path.dirname(path.resolve(file)) === path.resolve(this.localDir) && options.move) return path.resolve(file);
    const kept = path.join(path.resolve(this.localDir), freshName(file));
    fs.copyFileSync(file, kept);
    if (options.signal?.aborted) {
      fs.rmSync(kept, { force: true });
      options.signal.throwIfAborted();
    }
    const bytes = fs.statSync(kept).size;
    options.onBytes?.(bytes, bytes);
    if (options.move) fs.rmSync(file, { force: true });
    return kept;
  }

  async fetch(ref: string): Promise<{ path: string; release(): void }> {
    if (ref.startsWith(OBJECT_REF)) throw wrongStore(ref, 'a disk store');
    if (!fs.existsSync(ref)) throw new DrmError('INTERNAL_ERROR', 'the file of this job is no longer on disk');
    return { path: ref, release: () => {} };
  }

  async remove(ref: string): Promise<void> {
    if (!ref.startsWith(OBJECT_REF)) fs.rmSync(ref, { force: true });
  }

  async sweep(olderThanMs: number, isOwned: (ref: string) => Promise<boolean>): Promise<number> {
    if (!fs.existsSync(this.localDir)) return 0;
    let removed = 0;
    for (const name of fs.readdirSync(this.localDir)) {
      const file = path.join(path.resolve(this.localDir), name);
      if (!fs.statSync(file).isFile()) continue;
      const age = this.clock.now() - fs.statSync(file).mtimeMs;
      if (age > olderThanMs && !(await isOwned(file))) {
        fs.rmSync(file, { force: true });
        removed++;
      }
    }
    return removed;
  }
}
