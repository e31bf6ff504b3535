import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerOver } from '../helpers/fixtures.js';
import { playIn, type PlayerSite, startPlayerSite } from '../helpers/hlsjs-player.js';
import { makePanFilm } from '../helpers/media.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { drm, killAll, runDrm, type ServeProcess, startServe } from '../helpers/serve-process.js';

// Hls.js in headless Chromium plays a watermarked film kept in an object store
// (s3rver), by redirect (the server answers each segment with a 302 to a presigned URL; the key
// still comes from the server) and by proxy. s3rver keeps the CORS configuration that
// PutBucketCors sends and answers by it (its cors middleware): a bucket without a rule sends no
// Access-Control-Allow-Origin, so the browser refuses the bytes. The player therefore plays by
// redirect only after `drm storage setup`, as it would against S3, R2 or MinIO.

const T = 300_000;
let dir: string;
let s3: TestS3;
let env: NodeJS.ProcessEnv;
let site: PlayerSite;
let server: ServeProcess;
let filmId: string;
let org: { organizationId: string; apiKey: string };
const file = (name: string) => path.join(dir, name);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-hlsjs-s3-'));
  s3 = await startS3('drm-players');
  env = {
    DRM_STORE: `s3://${s3.bucket}/content`,
    DRM_S3_ENDPOINT: s3.endpoint,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
  };
  // 12 s: two segments, so the player fetches more than one by the store's URL.
  makePanFilm(file('film.mp4'), 12);
  // drm runs as child processes: s3rver, in this process, must answer while they work.
  await drm(['migrate', '--data-dir', file('data')], env);
  filmId = (
    JSON.parse(
      await drm(
        [
          'ingest',
          file('film.mp4'),
          '--title',
          'Pan',
          '--type',
          'video',
          '--watermark',
          '--data-dir',
          file('data'),
          '--json',
        ],
        env,
      ),
    ) as { contentId: string }
  ).contentId;
  server = await startServe({ dataDir: file('data'), env: { ...env, DRM_SEGMENT_DELIVERY: 'redirect' } });
  org = await registerOver(server.url, 'Bucket Player Co');
  await drm(
    [
      'admin',
      'license',
      '--org',
      org.organizationId,
      '--content',
      filmId,
      '--type',
      'video',
      '--data-dir',
      file('data'),
    ],
    env,
  );
  site = await startPlayerSite(file('profile'));
}, T);
afterAll(async () => {
  await site?.close();
  killAll();
  await s3?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function playlistOf(viewerId: string): Promise<string> {
  const res = await fetch(`${server.url}/api/v1/stream/${filmId}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ viewerId }),
  });
  expect(res.status).toBe(201);
  return `${server.url}${((await res.json()) as { playlistUrl: string }).playlistUrl}`;
}

/** What the tab asked of the bucket: each request's status (0: refused by the browser, with why) and the Origin it sent. */
function watchStore(tab: Page) {
  const seen: Array<{ url: string; status: number; origin: string | null; failure?: string }> = [];
  const fromStore = (url: string) => url.startsWith(`${s3.endpoint}/${s3.bucket}/`);
  tab.on('requestfinished', async (r) => {
    if (fromStore(r.url()))
      seen.push({ url: r.url(), status: (await r.response())?.status() ?? 0, origin: await r.headerValue('origin') });
  });
  tab.on('requestfailed', async (r) => {
    if (fromStore(r.url()))
      seen.push({ url: r.url(), status: 0, origin: await r.headerValue('origin'), failure: r.failure()?.errorText });
  });
  return seen;
}

const setup = async (...args: string[]) => {
  const r = await runDrm(['storage', 'setup', '--data-dir', file('data'), '--json', ...args], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { cors: Array<{ id: string; origins: string[] }>; note?: string };
};

describe('hls.js in Chromium against an object store', () => {
  it(
    'gets no segment from the bucket before drm storage setup: the browser refuses the cross-origin answer',
    async () => {
      let store: ReturnType<typeof watchStore> = [];
      const player = await playIn(site, await playlistOf('before-setup'), (tab) => (store = watchStore(tab)));
      await expect.poll(() => store.length, { timeout: 60_000, interval: 250 }).toBeGreaterThan(0);
      // net::ERR_FAILED is how Chromium reports a CORS refusal: s3rver did answer, without the header.
      expect(store.map((r) => [r.status, r.failure])).toEqual(store.map(() => [0, 'net::ERR_FAILED']));
      expect(await player.frames()).toBe(0);
      await player.tab.close();
    },
    T,
  );

  it(
    "is still refused with a named origin: after the server's cross-origin 302 the browser sends Origin: null",
    async () => {
      expect((await setup('--origin', site.origin)).note).toMatch(/Origin: null/);
      let store: ReturnType<typeof watchStore> = [];
      const player = await playIn(site, await playlistOf('named-origin'), (tab) => (store = watchStore(tab)));
      await expect.poll(() => store.length, { timeout: 60_000, interval: 250 }).toBeGreaterThan(0);
      // Chromium keeps no headers of a refused request; the next test sees the store get `null`.
      expect(store.map((r) => [r.status, r.failure])).toEqual(store.map(() => [0, 'net::ERR_FAILED']));
      expect(await player.frames()).toBe(0);
      await player.tab.close();
    },
    T,
  );

  it(
    'plays by redirect to the end once drm storage setup let any origin in, every segment from the bucket',
    async () => {
      const set = await setup();
      expect(set.cors).toEqual([expect.objectContaining({ id: 'drm-players', origins: ['*'] })]);
      let store: ReturnType<typeof watchStore> = [];
      const redirects: string[] = [];
      const player = await playIn(site, await playlistOf('after-setup'), (tab) => {
        store = watchStore(tab);
        tab.on('response', (r) => {
          if (r.url().includes('/segment/') && r.status() === 302) redirects.push(r.url());
        });
      });
      await expect.poll(player.ended, { timeout: 120_000, interval: 500 }).toBe(true);
      expect((await player.errors()).filter((e) => e.includes('fatal'))).toEqual([]);
      expect(await player.frames()).toBeGreaterThan(250);
      const segments = store.filter((r) => r.status === 200);
      expect(segments.length).toBeGreaterThanOrEqual(2);
      expect(redirects.length).toBeGreaterThanOrEqual(2);
      // The page's origin is not what reached the store: the browser hid it after the API's 302.
      expect(segments.every((r) => /X-Amz-Expires=50/.test(r.url) && r.origin === 'null')).toBe(true);
      await player.tab.close();
    },
    T,
  );

  it(
    'plays by proxy too, nothing fetched from the bucket by the browser',
    async () => {
      await server.stop();
      server = await startServe({ dataDir: file('data'), env });
      expect(server.info).toMatchObject({ segmentDelivery: 'proxy' });
      let store: ReturnType<typeof watchStore> = [];
      const player = await playIn(site, await playlistOf('proxy'), (tab) => (store = watchStore(tab)));
      await expect.poll(player.ended, { timeout: 120_000, interval: 500 }).toBe(true);
      expect((await player.errors()).filter((e) => e.includes('fatal'))).toEqual([]);
      expect(await player.frames()).toBeGreaterThan(250);
      expect(store).toEqual([]);
    },
    T,
  );
});
