import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeChecks } from '../../src/doctor/store-checks.js';
import type { SegmentDelivery, StorageConfig } from '../../src/storage/config.js';
import { setUpStore } from '../../src/storage/setup.js';
import { startS3, type TestS3 } from '../helpers/s3.js';

// The content store is checked as drm will use it. Against a real s3rver in
// this process: the bucket answers with these credentials, or the failure names its fix; with
// redirect, drm's CORS rule for players is there. A disk store: its directory can be written.

let s3: TestS3;
let dir: string;
const s3Storage = (
  bucket: string,
  segmentDelivery: SegmentDelivery = 'proxy',
  endpoint = s3.endpoint,
): StorageConfig => ({
  store: { kind: 's3', bucket, prefix: 'content' },
  s3: { endpoint },
  segmentDelivery,
});
const fileStorage = (root: string): StorageConfig => ({
  store: { kind: 'file', root },
  s3: {},
  segmentDelivery: 'proxy',
});

/** A loopback port nothing listens on. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  s3 = await startS3('drm-doctor');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-doctor-store-'));
});
afterAll(async () => {
  await s3?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('drm doctor: an object store', () => {
  it('is ok when the bucket answers; with proxy delivery the bucket CORS is not asked', async () => {
    const checks = await storeChecks(s3Storage('drm-doctor'));
    expect(checks).toEqual([
      {
        name: 'content store',
        status: 'ok',
        detail: `s3://drm-doctor/content at ${s3.endpoint} answers (nothing under the prefix yet)`,
      },
    ]);
  });

  it('warns, with redirect, until drm storage setup has set the players rule', async () => {
    const before = await storeChecks(s3Storage('drm-doctor', 'redirect'));
    expect(before.map((c) => [c.name, c.status])).toEqual([
      ['content store', 'ok'],
      ['bucket CORS', 'warn'],
    ]);
    expect(before[1]).toMatchObject({
      detail: expect.stringMatching(/no CORS rule drm-players on bucket drm-doctor: .*browsers refuse every segment/),
      fix: 'run drm storage setup',
    });

    await setUpStore(s3Storage('drm-doctor', 'redirect'), { origins: ['https://films.example'] });
    const named = await storeChecks(s3Storage('drm-doctor', 'redirect'));
    expect(named[1]).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/allows https:\/\/films\.example: .*Origin: null/),
      fix: expect.stringContaining('without --origin'),
    });

    await setUpStore(s3Storage('drm-doctor', 'redirect'));
    const after = await storeChecks(s3Storage('drm-doctor', 'redirect'));
    expect(after[1]).toMatchObject({
      name: 'bucket CORS',
      status: 'ok',
      detail: expect.stringContaining('GET, HEAD from *'),
    });
  });

  it('fails on a missing bucket, naming drm storage setup, and checks no CORS', async () => {
    const checks = await storeChecks(s3Storage('drm-nowhere', 'redirect'));
    expect(checks).toEqual([
      {
        name: 'content store',
        status: 'fail',
        detail: `s3://drm-nowhere/content: the bucket drm-nowhere does not exist at ${s3.endpoint}`,
        fix: expect.stringMatching(/^run drm storage setup/),
      },
    ]);
  });

  it('fails on an endpoint that does not answer, naming --s3-endpoint', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const [check] = await storeChecks(s3Storage('drm-doctor', 'proxy', endpoint));
    expect(check).toMatchObject({
      name: 'content store',
      status: 'fail',
      detail: expect.stringContaining(`cannot reach ${endpoint} (ECONNREFUSED)`),
      fix: expect.stringContaining('--s3-endpoint'),
    });
  });

  // s3rver checks the key's id (not the signature): an unknown id is refused as a real store refuses it.
  it('fails on refused credentials, naming the AWS variables', async () => {
    const stranger = new S3Client({
      endpoint: s3.endpoint,
      forcePathStyle: true,
      region: 'us-east-1',
      credentials: { accessKeyId: 'NOBODY', secretAccessKey: 'nothing' },
    });
    const [check] = await storeChecks(s3Storage('drm-doctor'), stranger);
    expect(check).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('refused the credentials (InvalidAccessKeyId)'),
      fix: expect.stringContaining('AWS_ACCESS_KEY_ID'),
    });
  });
});

describe('drm doctor: a disk store', () => {
  it('is ok when the directory is writable, or does not exist yet under a writable one', async () => {
    expect(await storeChecks(fileStorage(dir))).toEqual([
      { name: 'content store', status: 'ok', detail: `file:${dir} is writable` },
    ]);
    const later = path.join(dir, 'not', 'yet');
    expect(await storeChecks(fileStorage(later))).toEqual([
      {
        name: 'content store',
        status: 'ok',
        detail: `file:${later} does not exist yet; drm creates it (in ${dir}, which is writable)`,
      },
    ]);
    expect(fs.existsSync(later)).toBe(false);
  });

  it('fails when a file stands where the directory should be', async () => {
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, 'x');
    const [check] = await storeChecks(fileStorage(path.join(file, 'content')));
    expect(check).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(`${file} is a file, not a directory`),
      fix: expect.stringContaining('--store file:DIR'),
    });
  });

  // root writes anywhere, so a folder without write permission says nothing there
  it.skipIf(process.getuid?.() === 0)(
    'fails when neither the directory nor a folder above it can be written',
    async () => {
      const locked = path.join(dir, 'locked');
      fs.mkdirSync(locked, { mode: 0o555 });
      const [inside] = await storeChecks(fileStorage(locked));
      expect(inside).toMatchObject({
        status: 'fail',
        detail: `file:${locked} is not writable`,
        fix: expect.stringContaining('chown'),
      });
      const [below] = await storeChecks(fileStorage(path.join(locked, 'content')));
      expect(below).toMatchObject({
        status: 'fail',
        fix: expect.stringContaining(`mkdir -p ${path.join(locked, 'content')}`),
      });
      fs.chmodSync(locked, 0o755);
    },
  );
});
