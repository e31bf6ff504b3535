import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DeleteObjectsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContentBackend } from '../../src/storage/backend.js';
import { parseStore } from '../../src/storage/config.js';
import { contentBackend, s3Client } from '../../src/storage/s3-store.js';
import { PART_BYTES } from '../../src/storage/s3-upload.js';
import { startS3, type TestS3 } from '../helpers/s3.js';

// One storage contract, run on the local disk and on a real S3 server
// (s3rver): an item is published whole or not at all, read back by its files' names, removed.

const NAMES_KEY = Buffer.alloc(32, 7);

/** The store's refusals are the one error type, with the spec's codes. */
const expectDrmError = (work: Promise<unknown>, code: string) =>
  expect(work).rejects.toMatchObject({ name: 'DrmError', code });

/** A staged item as ingest leaves it: two variants' playlists and segments, a thumbnail. */
function stageItem(root: string, extra: Record<string, Buffer> = {}): { dir: string; files: Record<string, Buffer> } {
  const dir = fs.mkdtempSync(path.join(root, 'staged-'));
  const files: Record<string, Buffer> = {
    'a/index.m3u8': Buffer.from('#EXTM3U\n#EXTINF:10,\n00000.ts\n'),
    'a/00000.ts': randomBytes(1000),
    'b/index.m3u8': Buffer.from('#EXTM3U\n#EXTINF:10,\n00000.ts\n'),
    'b/00000.ts': randomBytes(1000),
    'thumbnail.jpg': randomBytes(300),
    ...extra,
  };
  for (const [name, bytes] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), bytes);
  }
  return { dir, files };
}

describe.each(['file', 's3'] as const)('the content store on %s', (kind) => {
  let root: string;
  let s3: TestS3 | undefined;
  let store: ContentBackend;

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-store-'));
    if (kind === 's3') s3 = await startS3();
    store = s3
      ? contentBackend({ kind: 's3', bucket: s3.bucket, prefix: 'content' }, NAMES_KEY, { endpoint: s3.endpoint })
      : contentBackend({ kind: 'file', root: path.join(root, 'content') }, NAMES_KEY);
  }, 60_000);
  afterAll(async () => {
    await s3?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('publishes a staged item whole and reads every file back by its name', async () => {
    const id = randomUUID();
    const { dir, files } = stageItem(root);
    expect(await store.has(id)).toBe(false);
    const result = await store.publish(id, dir);
    expect(result).toMatchObject({ files: 5, bytes: Object.values(files).reduce((n, b) => n + b.length, 0) });
    expect(await store.has(id)).toBe(true);
    expect(await store.names(id)).toEqual(Object.keys(files).sort());
    for (const [name, bytes] of Object.entries(files)) expect((await store.read(id, name)).equals(bytes)).toBe(true);
    const { body, bytes } = await store.stream(id, 'b/00000.ts');
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(c as Buffer);
    expect(bytes).toBe(1000);
    expect(Buffer.concat(chunks).equals(files['b/00000.ts'] as Buffer)).toBe(true);
  });

  it('refuses to publish an item twice, and says what is not there', async () => {
    const id = randomUUID();
    await store.publish(id, stageItem(root).dir);
    await expectDrmError(store.publish(id, stageItem(root).dir), 'CONFLICT');
    await expectDrmError(store.read(id, 'a/00001.ts'), 'NOT_FOUND');
    await expectDrmError(store.read(id, '../other/a/00000.ts'), 'NOT_FOUND');
    await expectDrmError(store.names(randomUUID()), 'NOT_FOUND');
    await expectDrmError(store.read('../..', 'thumbnail.jpg'), 'NOT_FOUND');
  });

  it('takes a file larger than a part (sent in parts to an object store) and gives it back byte for byte', async () => {
    const id = randomUUID();
    const big = randomBytes(PART_BYTES + 1_500_000);
    const result = await store.publish(id, stageItem(root, { 'preview.mp4': big }).dir);
    expect(result.multipart).toBe(kind === 's3' ? 1 : 0);
    expect((await store.read(id, 'preview.mp4')).equals(big)).toBe(true);
  }, 60_000);

  it('removes an item: it is no longer published, and its files are gone', async () => {
    const id = randomUUID();
    await store.publish(id, stageItem(root).dir);
    await store.remove(id);
    expect(await store.has(id)).toBe(false);
    await expectDrmError(store.read(id, 'thumbnail.jpg'), 'NOT_FOUND');
    if (s3) expect(await keysUnder(s3, `content/${id}/`)).toEqual([]);
  });

  it.runIf(kind === 's3')(
    'names objects so that a segment URL tells nothing of its variant or its number',
    async () => {
      const id = randomUUID();
      await store.publish(id, stageItem(root).dir);
      const keys = await keysUnder(s3 as TestS3, `content/${id}/`);
      expect(keys).toHaveLength(6);
      const leaves = keys.map((k) => k.slice(`content/${id}/`.length)).filter((leaf) => leaf !== 'manifest.json');
      for (const leaf of leaves) expect(leaf).toMatch(/^[0-9a-f]{40}$/);
      const signed = await store.signedUrl(id, 'a/00000.ts', 60);
      expect(signed?.bytes).toBe(1000);
      const url = signed?.url as string;
      expect(url).not.toMatch(/00000|\/a\/|\.ts/);
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).length).toBe(1000);
    },
  );

  it.runIf(kind === 's3')('signs URLs that stop working when they expire', async () => {
    const id = randomUUID();
    await store.publish(id, stageItem(root).dir);
    const url = (await store.signedUrl(id, 'b/00000.ts', 1))?.url as string;
    await new Promise((r) => setTimeout(r, 2100));
    expect((await fetch(url)).status).toBe(403);
    expect((await store.signedUrl(id, 'b/00000.ts', 60))?.url).not.toBe(url);
  });

  it.runIf(kind === 's3')('publishes nothing and leaves nothing when a publish fails midway', async () => {
    const id = randomUUID();
    const { dir } = stageItem(root);
    // A file that vanishes while the others are sent: the publish fails after some objects went.
    fs.symlinkSync(path.join(root, 'no-such-file'), path.join(dir, 'zz-missing.ts'));
    await expect(store.publish(id, dir)).rejects.toThrow();
    expect(await store.has(id)).toBe(false);
    expect(await keysUnder(s3 as TestS3, `content/${id}/`)).toEqual([]);
  });

  it.runIf(kind === 's3')('sweeps the objects a killed publish left (no manifest), and only those', async () => {
    const published = randomUUID();
    await store.publish(published, stageItem(root).dir);
    const killed = randomUUID();
    // What a publish killed before its manifest leaves: objects under the item, no manifest.
    const half = contentBackend({ kind: 's3', bucket: (s3 as TestS3).bucket, prefix: 'content' }, NAMES_KEY, {
      endpoint: (s3 as TestS3).endpoint,
    });
    await half.publish(killed, stageItem(root).dir);
    const manifestKey = `content/${killed}/manifest.json`;
    await s3Client({ endpoint: (s3 as TestS3).endpoint }).send(
      new DeleteObjectsCommand({ Bucket: (s3 as TestS3).bucket, Delete: { Objects: [{ Key: manifestKey }] } }),
    );
    expect(await store.sweep(60_000)).toBe(0);
    expect(await store.sweep(-1000)).toBe(5);
    expect(await keysUnder(s3 as TestS3, `content/${killed}/`)).toEqual([]);
    expect(await keysUnder(s3 as TestS3, `content/${published}/`)).toHaveLength(6);
  });
});

async function keysUnder(s3: TestS3, prefix: string): Promise<string[]> {
  const page = await s3Client({ endpoint: s3.endpoint }).send(
    new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }),
  );
  return (page.Contents ?? []).map((o) => o.Key as string).sort();
}

describe('--store', () => {
  it('names the disk or a bucket and a prefix, and refuses anything else in one line', () => {
    expect(parseStore(undefined, '/data/content')).toEqual({ kind: 'file', root: '/data/content' });
    expect(parseStore('file:/srv/content', '/data/content')).toEqual({ kind: 'file', root: '/srv/content' });
    expect(parseStore('s3://drm-media/prod/content/', '/d')).toEqual({
      kind: 's3',
      bucket: 'drm-media',
      prefix: 'prod/content',
    });
    expect(parseStore('s3://drm-media', '/d')).toEqual({ kind: 's3', bucket: 'drm-media', prefix: '' });
    for (const bad of ['s3://B', 'http://x', 'file:', 's3://a']) expect(() => parseStore(bad, '/d')).toThrow(/--store/);
  });
});
