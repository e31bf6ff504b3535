import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { DrmError } from '../errors.js';
import type { S3Location } from './s3-backend.js';
import { putFile } from './s3-upload.js';

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
  keep(file: string, options: { move: boolean }): Promise<string>;
  /** The kept file as a path to read, and `release` for the copy fetched (nothing on a disk). */
  fetch(ref: string): Promise<{ path: string; release(): void }>;
  remove(ref: string): Promise<void>;
  /** Removes kept files older than `olderThanMs` that no job owns (a process died between keeping and queueing). */
  sweep(olderThanMs: number, isOwned: (ref: string) => Promise<boolean>): Promise<number>;
}

const OBJECT_REF = 'spool:';

/** Refs name their store: a disk's ref is a path, an object's starts with `spool:`. */
function wrongStore(ref: string, here: string): DrmError {
  const where = ref.startsWith(OBJECT_REF) ? 'an object store (run this with its --store s3://…)' : `the disk of the machine that received it (${ref})`;
  return new DrmError('INTERNAL_ERROR', `the file of this job is in ${where}, and this process uses ${here}`);
}

function freshName(file: string): string {
  return `${randomUUID()}${path.extname(file).slice(0, 12).replace(/[^.a-zA-Z0-9]/g, '')}`;
}

/** The spool of a disk store: the uploads directory of the data directory. */
export class DiskSpool implements Spool {
  constructor(readonly localDir: string) {}

  async keep(file: string, options: { move: boolean }): Promise<string> {
    fs.mkdirSync(this.localDir, { recursive: true, mode: 0o700 });
    if (path.dirname(path.resolve(file)) === path.resolve(this.localDir) && options.move) return path.resolve(file);
    const kept = path.join(path.resolve(this.localDir), freshName(file));
    fs.copyFileSync(file, kept);
    if (options.move) fs.rmSync(file, { force: true });
    return kept;
  }

  async fetch(ref: string): Promise<{ path: string; release(): void }> {
    if (ref.startsWith(OBJECT_REF)) throw wrongStore(ref, `the disk (${this.localDir})`);
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
      const age = Date.now() - fs.statSync(file).mtimeMs;
      if (age > olderThanMs && !(await isOwned(file))) {
        fs.rmSync(file, { force: true });
        removed++;
      }
    }
    return removed;
  }
}

/** The spool of an object store: objects `<prefix>/.spool/<name>`, fetched into the uploads directory to be read. */
export class ObjectSpool implements Spool {
  private readonly keyPrefix: string;

  constructor(
    private readonly s3: S3Client,
    private readonly where: S3Location,
    readonly localDir: string,
  ) {
    this.keyPrefix = `${where.prefix ? `${where.prefix}/` : ''}.spool/`;
  }

  async keep(file: string, options: { move: boolean }): Promise<string> {
    const name = freshName(file);
    await putFile(this.s3, this.where.bucket, this.keyPrefix + name, file, 'application/octet-stream');
    if (options.move) fs.rmSync(file, { force: true });
    return OBJECT_REF + name;
  }

  async fetch(ref: string): Promise<{ path: string; release(): void }> {
    const key = this.keyOf(ref);
    fs.mkdirSync(this.localDir, { recursive: true, mode: 0o700 });
    const copy = path.join(this.localDir, `fetched-${process.pid}-${randomUUID()}${path.extname(ref)}`);
    try {
      const got = await this.s3.send(new GetObjectCommand({ Bucket: this.where.bucket, Key: key }));
      await pipeline(got.Body as Readable, fs.createWriteStream(copy, { mode: 0o600 }));
    } catch (err) {
      fs.rmSync(copy, { force: true });
      if ((err as { name?: string }).name === 'NoSuchKey') throw new DrmError('INTERNAL_ERROR', 'the file of this job is no longer in the store');
      throw err;
    }
    return { path: copy, release: () => fs.rmSync(copy, { force: true }) };
  }

  async remove(ref: string): Promise<void> {
    if (!ref.startsWith(OBJECT_REF)) return;
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.where.bucket, Key: this.keyOf(ref) }));
  }

  async sweep(olderThanMs: number, isOwned: (ref: string) => Promise<boolean>): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    let token: string | undefined;
    do {
      const page = await this.s3.send(new ListObjectsV2Command({ Bucket: this.where.bucket, Prefix: this.keyPrefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        const ref = OBJECT_REF + (o.Key ?? '').slice(this.keyPrefix.length);
        if ((o.LastModified?.getTime() ?? 0) >= cutoff || (await isOwned(ref))) continue;
        await this.remove(ref);
        removed++;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return removed;
  }

  private keyOf(ref: string): string {
    const name = ref.slice(OBJECT_REF.length);
    if (!ref.startsWith(OBJECT_REF) || !/^[0-9a-f-]{36}[.a-zA-Z0-9]*$/.test(name)) throw wrongStore(ref, `an object store (${this.where.bucket})`);
    return this.keyPrefix + name;
  }
}
