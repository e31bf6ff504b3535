import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { DrmError } from '../errors.js';
import type { S3Location } from './s3-backend.js';
import { putFile } from './s3-upload.js';
import { freshName, type KeepOptions, LOCAL_COPY_MS, OBJECT_REF, type Spool, wrongStore } from './spool.js';
import { type Clock, systemClock } from '../clock.js';

// Apart from ./spool.ts so that a deployment on a disk never loads the AWS SDK.

/**
 * The spool of an object store: objects `<prefix>/.spool/<name>`, fetched into the uploads
 * directory to be read. With `localCopies` (a process that runs analyses), a file handed over is
 * also kept here for an hour (`kept-<pid>-<name>`), so that the analysis of a leak this process
 * received, most often run by this process, reads it from the disk instead of from the bucket.
 */
export class ObjectSpool implements Spool {
  private readonly keyPrefix: string;
  /** this process's copies of what it kept, by object name, with when they were made */
  private readonly copies = new Map<string, number>();

  constructor(
    private readonly s3: S3Client,
    private readonly where: S3Location,
    readonly localDir: string,
    private readonly localCopies = false,
    private readonly clock: Clock = systemClock,
  ) {
    this.keyPrefix = `${where.prefix ? `${where.prefix}/` : ''}.spool/`;
  }

  async keep(file: string, options: KeepOptions): Promise<string> {
    const name = freshName(file);
    const { signal, onBytes } = options;
    await putFile(this.s3, this.where.bucket, this.keyPrefix + name, file, 'application/octet-stream', {
      signal,
      onBytes,
    });
    this.dropOldCopies();
    if (options.move && this.localCopies && path.resolve(path.dirname(file)) === path.resolve(this.localDir)) {
      fs.renameSync(file, this.copyPath(name));
      this.copies.set(name, this.clock.now());
    } else if (options.move) fs.rmSync(file, { force: true });
    return OBJECT_REF + name;
  }

  async fetch(ref: string, signal?: AbortSignal): Promise<{ path: string; release(): void }> {
    const key = this.keyOf(ref);
    fs.mkdirSync(this.localDir, { recursive: true, mode: 0o700 });
    const copy = path.join(this.localDir, `fetched-${process.pid}-${randomUUID()}${path.extname(ref)}`);
    if (this.linkLocalCopy(ref.slice(OBJECT_REF.length), copy))
      return { path: copy, release: () => fs.rmSync(copy, { force: true }) };
    try {
      const got = await this.s3.send(new GetObjectCommand({ Bucket: this.where.bucket, Key: key }), {
        abortSignal: signal,
      });
      await pipeline(got.Body as Readable, fs.createWriteStream(copy, { mode: 0o600 }), { signal });
    } catch (err) {
      fs.rmSync(copy, { force: true });
      if ((err as { name?: string }).name === 'NoSuchKey')
        throw new DrmError('INTERNAL_ERROR', 'the file of this job is no longer in the store');
      throw err;
    }
    return { path: copy, release: () => fs.rmSync(copy, { force: true }) };
  }

  async remove(ref: string): Promise<void> {
    if (!ref.startsWith(OBJECT_REF)) return;
    const key = this.keyOf(ref);
    this.dropCopy(ref.slice(OBJECT_REF.length));
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.where.bucket, Key: key }));
  }

  private copyPath(name: string): string {
    return path.join(this.localDir, `kept-${process.pid}-${name}`);
  }

  /**
   * A hard link to this process's own copy (free, and the copy may go while the link is read); false when there is
   * none.
   */
  private linkLocalCopy(name: string, link: string): boolean {
    if (!this.copies.has(name)) return false;
    try {
      fs.linkSync(this.copyPath(name), link);
      return true;
    } catch {
      this.copies.delete(name);
      return false;
    }
  }

  private dropCopy(name: string): void {
    if (this.copies.delete(name)) fs.rmSync(this.copyPath(name), { force: true });
  }

  /** Copies whose case another process took are of no use after a while: an hour bounds what they hold. */
  private dropOldCopies(): void {
    for (const [name, at] of this.copies) if (this.clock.now() - at > LOCAL_COPY_MS) this.dropCopy(name);
  }

  async sweep(olderThanMs: number, isOwned: (ref: string) => Promise<boolean>): Promise<number> {
    const cutoff = this.clock.now() - olderThanMs;
    let removed = sweepLocalLeftovers(this.localDir, cutoff);
    let token: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.where.bucket, Prefix: this.keyPrefix, ContinuationToken: token }),
      );
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
    if (!ref.startsWith(OBJECT_REF) || !/^[0-9a-f-]{36}[.a-zA-Z0-9]*$/.test(name))
      throw wrongStore(ref, 'an object store');
    return this.keyPrefix + name;
  }
}

/**
 * The local side of an object spool holds no file a job needs, only files on their way: uploads
 * being received, copies fetched for work under way (`fetched-<pid>-…`) and a process's own copies
 * of what it kept (`kept-<pid>-…`). A copy whose process is gone (a worker killed mid-job) goes
 * at once, anything else once it is older than `cutoff`.
 */
function sweepLocalLeftovers(dir: string, cutoff: number): number {
  if (!fs.existsSync(dir)) return 0;
  let removed = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(dir, entry.name);
    const pid = Number(/^(?:fetched|kept)-(\d+)-/.exec(entry.name)?.[1]);
    if ((pid > 0 && !processAlive(pid)) || fs.statSync(file).mtimeMs < cutoff) {
      fs.rmSync(file, { force: true });
      removed++;
    }
  }
  return removed;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
