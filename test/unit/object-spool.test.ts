import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  DeleteObjectCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { s3Client } from '../../src/storage/s3-store.js';
import { PART_BYTES } from '../../src/storage/s3-upload.js';
import { ObjectSpool } from '../../src/storage/object-spool.js';
import { startS3, type TestS3 } from '../helpers/s3.js';

// Two leftovers on an object store: a send stopped half-way (Ctrl-C during
// `drm ingest --queue`) leaves nothing behind, and a leak the receiving process analyses itself is
// read from its own disk rather than sent up to the bucket and fetched back down.

describe('an object spool', () => {
  let dir: string;
  let s3: TestS3;
  const where = { bucket: '', prefix: 'content' };
  const spooled = async () => {
    const page = await s3Client({ endpoint: s3.endpoint }).send(
      new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'content/.spool/' }),
    );
    return (page.Contents ?? []).map((o) => o.Key);
  };
  const received = (spool: ObjectSpool, bytes: Buffer) => {
    fs.mkdirSync(spool.localDir, { recursive: true });
    const file = path.join(spool.localDir, `${randomBytes(4).toString('hex')}.upload`);
    fs.writeFileSync(file, bytes);
    return file;
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-object-spool-'));
    s3 = await startS3();
    where.bucket = s3.bucket;
  }, 60_000);
  afterAll(async () => {
    await s3.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stopped while sending in parts, aborts the upload and keeps nothing', async () => {
    const client = s3Client({ endpoint: s3.endpoint });
    const sent = vi.spyOn(client, 'send');
    const spool = new ObjectSpool(client, where, path.join(dir, 'uploads-a'));
    const source = path.join(dir, 'film.mp4');
    fs.writeFileSync(source, randomBytes(PART_BYTES * 2 + 1000));
    const controller = new AbortController();
    const progress: number[] = [];
    const keeping = spool.keep(source, {
      move: false,
      signal: controller.signal,
      onBytes: (bytes) => {
        progress.push(bytes);
        controller.abort();
      },
    });
    await expect(keeping).rejects.toMatchObject({ name: 'AbortError' });
    expect(progress).toEqual([PART_BYTES]);
    const commands = sent.mock.calls.map(([command]) => command);
    expect(commands.some((c) => c instanceof AbortMultipartUploadCommand)).toBe(true);
    expect(commands.some((c) => c instanceof CompleteMultipartUploadCommand)).toBe(false);
    expect(await spooled()).toEqual([]);
    expect(fs.existsSync(source)).toBe(true);
  });

  it('reads a leak it received and kept from its own disk, until the leak is removed', async () => {
    const spool = new ObjectSpool(s3Client({ endpoint: s3.endpoint }), where, path.join(dir, 'uploads-b'), true);
    const leak = randomBytes(5000);
    const ref = await spool.keep(received(spool, leak), { move: true });
    const [key] = await spooled();
    // Gone from the bucket, the leak is still read: from this process's copy, not by a download.
    await s3Client({ endpoint: s3.endpoint }).send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
    const got = await spool.fetch(ref);
    expect(fs.readFileSync(got.path).equals(leak)).toBe(true);
    got.release();
    expect(fs.existsSync(got.path)).toBe(false);
    await spool.remove(ref);
    expect(fs.readdirSync(spool.localDir)).toEqual([]);
    await expect(spool.fetch(ref)).rejects.toMatchObject({
      code: 'INTERNAL_ERROR',
      message: expect.stringMatching(/no longer/),
    });
  });

  it('keeps no copy in a process that runs no analyses, and another process downloads', async () => {
    const serverOnly = new ObjectSpool(s3Client({ endpoint: s3.endpoint }), where, path.join(dir, 'uploads-c'));
    const leak = randomBytes(3000);
    const ref = await serverOnly.keep(received(serverOnly, leak), { move: true });
    expect(fs.readdirSync(serverOnly.localDir)).toEqual([]);
    const worker = new ObjectSpool(s3Client({ endpoint: s3.endpoint }), where, path.join(dir, 'uploads-d'), true);
    const got = await worker.fetch(ref);
    expect(fs.readFileSync(got.path).equals(leak)).toBe(true);
    got.release();
    await worker.remove(ref);
    expect(await spooled()).toEqual([]);
  });

  it('sweeps the copies a process that died kept', async () => {
    const spool = new ObjectSpool(s3Client({ endpoint: s3.endpoint }), where, path.join(dir, 'uploads-e'), true);
    fs.mkdirSync(spool.localDir, { recursive: true });
    // pid 2^22 + 1 is above Linux's pid_max: no process has it.
    const dead = path.join(spool.localDir, 'kept-4194305-2b5e4a6c-54f2-4b8e-9d3e-3f0a3c7b8e11.mp4');
    const mine = path.join(spool.localDir, `kept-${process.pid}-2b5e4a6c-54f2-4b8e-9d3e-3f0a3c7b8e12.mp4`);
    for (const file of [dead, mine]) fs.writeFileSync(file, 'x');
    expect(await spool.sweep(60_000, async () => false)).toBe(1);
    expect([fs.existsSync(dead), fs.existsSync(mine)]).toEqual([false, true]);
  });
});
