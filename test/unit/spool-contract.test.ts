import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorageConfig } from '../../src/storage/config.js';
import { openContentStore } from '../../src/storage/open.js';
import type { ContentStore } from '../../src/storage/content-store.js';
import { PART_BYTES } from '../../src/storage/s3-upload.js';
import { startS3, type TestS3 } from '../helpers/s3.js';

// Files that wait for a job — a leak for
// its analysis, a source for a queued ingest — kept where any worker can read them back, on the
// disk and in a real S3 server alike.

describe.each(['file', 's3'] as const)('the spool on %s', (kind) => {
  let dir: string;
  let s3: TestS3 | undefined;
  let store: ContentStore;
  const file = (name: string, bytes: Buffer) => {
    fs.writeFileSync(path.join(dir, name), bytes);
    return path.join(dir, name);
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-spool-'));
    if (kind === 's3') s3 = await startS3();
    const storage: StorageConfig = {
      store: s3
        ? { kind: 's3', bucket: s3.bucket, prefix: 'content' }
        : { kind: 'file', root: path.join(dir, 'data', 'content') },
      s3: { endpoint: s3?.endpoint },
      segmentDelivery: 'proxy',
    };
    store = await openContentStore(storage, path.join(dir, 'data'), Buffer.alloc(32, 1));
  }, 60_000);
  afterAll(async () => {
    await s3?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("keeps a copy of the user's file, or takes a received one, and gives each back byte for byte", async () => {
    const source = randomBytes(kind === 's3' ? PART_BYTES + 1000 : 5000);
    const user = file('film.mp4', source);
    const copied = await store.spool.keep(user, { move: false });
    expect(fs.readFileSync(user).equals(source)).toBe(true);
    fs.mkdirSync(store.spool.localDir, { recursive: true });
    const received = path.join(store.spool.localDir, 'upload-1.upload');
    fs.writeFileSync(received, Buffer.from('leak'));
    const taken = await store.spool.keep(received, { move: true });
    if (kind === 's3') expect(fs.existsSync(received)).toBe(false);
    for (const [ref, bytes] of [
      [copied, source],
      [taken, Buffer.from('leak')],
    ] as const) {
      const got = await store.spool.fetch(ref);
      // .equals, not toEqual: a deep comparison of 8 MB takes vitest minutes.
      expect(fs.readFileSync(got.path).equals(bytes)).toBe(true);
      got.release();
      // A fetched copy goes with its release; the kept file stays until it is removed.
      expect(fs.existsSync(got.path)).toBe(kind === 'file');
      await store.spool.remove(ref);
      await expect(store.spool.fetch(ref)).rejects.toMatchObject({
        code: 'INTERNAL_ERROR',
        message: expect.stringMatching(/no longer/),
      });
    }
  });

  it('sweeps kept files that no job owns once they are old enough, and only those', async () => {
    const owned = await store.spool.keep(file('a.mp4', Buffer.from('a')), { move: false });
    const orphan = await store.spool.keep(file('b.mp4', Buffer.from('b')), { move: false });
    const isOwned = async (ref: string) => ref === owned;
    expect(await store.spool.sweep(60_000, isOwned)).toBe(0);
    expect(await store.spool.sweep(-1000, isOwned)).toBe(1);
    await expect(store.spool.fetch(orphan)).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
    const kept = await store.spool.fetch(owned);
    expect(fs.readFileSync(kept.path, 'utf8')).toBe('a');
    kept.release();
    // Spooled files are not content: the sweep of half-published items leaves them alone.
    expect(await store.backend.sweep(-1000)).toBe(0);
    await store.spool.remove(owned);
  });

  it.runIf(kind === 's3')(
    'sweeps the local copies of workers that died, and uploads never finished once they are old',
    async () => {
      fs.mkdirSync(store.spool.localDir, { recursive: true });
      const local = (name: string) => path.join(store.spool.localDir, name);
      // pid 2^22 + 1 is above Linux's pid_max: no process has it.
      for (const name of ['fetched-4194305-a.mp4', `fetched-${process.pid}-b.mp4`, 'receiving.upload'])
        fs.writeFileSync(local(name), 'x');
      expect(await store.spool.sweep(60_000, async () => false)).toBe(1);
      expect(fs.existsSync(local('fetched-4194305-a.mp4'))).toBe(false);
      expect(fs.existsSync(local(`fetched-${process.pid}-b.mp4`))).toBe(true);
      expect(fs.existsSync(local('receiving.upload'))).toBe(true);
      expect(await store.spool.sweep(-1000, async () => false)).toBe(2);
    },
  );

  it('says where a file of the other kind of store is, instead of reading a wrong one', async () => {
    const other = kind === 'file' ? 'spool:2b5e4a6c-54f2-4b8e-9d3e-3f0a3c7b8e11.mp4' : '/srv/drm/uploads/x.upload';
    await expect(store.spool.fetch(other)).rejects.toMatchObject({
      message: expect.stringMatching(kind === 'file' ? /object store/ : /disk of the machine/),
    });
  });
});
