import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaBinaries } from '../../src/media/binaries.js';
import { probeMedia } from '../../src/media/probe.js';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { s3Client } from '../../src/storage/s3-store.js';
import { registerOver } from '../helpers/fixtures.js';
import { makePanFilm } from '../helpers/media.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { drm, killAll, runDrm, type ServeProcess, startServe } from '../helpers/serve-process.js';

// Content in a real S3 server (s3rver). `drm ingest` publishes a
// watermarked film into the bucket, `drm serve` plays it to ffmpeg with the server streaming each
// segment (proxy) and with a 302 to a presigned URL of the store (redirect), metering both.

const T = 300_000;
const bins = mediaBinaries();
let dir: string;
let s3: TestS3;
let env: NodeJS.ProcessEnv;
let filmId: string;
/** the viewers who played, by external id: their internal ids and 40 bits */
const viewers: Record<string, { viewerId: string; binaryId: string }> = {};
let org: { organizationId: string; apiKey: string };
const file = (name: string) => path.join(dir, name);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-s3-'));
  s3 = await startS3();
  env = {
    DRM_STORE: `s3://${s3.bucket}/content`,
    DRM_S3_ENDPOINT: s3.endpoint,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
  };
  makePanFilm(file('film.mp4'), 22);
  // drm's own commands run as child processes, so nothing here blocks s3rver while they work.
  await drm(['migrate', '--data-dir', file('data')], env);
  const out = JSON.parse(
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
  ) as { contentId: string };
  filmId = out.contentId;
}, T);
afterAll(async () => {
  killAll();
  await s3?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function playThrough(server: ServeProcess, viewerId: string) {
  const res = await fetch(`${server.url}/api/v1/stream/${filmId}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ viewerId }),
  });
  expect(res.status).toBe(201);
  const session = (await res.json()) as { sessionId: string; playlistUrl: string; viewerId: string; binaryId: string };
  viewers[viewerId] = { viewerId: session.viewerId, binaryId: session.binaryId };
  const copy = file(`${viewerId}.ts`);
  // Not execFileSync: s3rver runs in this process, and must answer while ffmpeg plays.
  await promisify(execFile)(bins.ffmpeg, [
    '-v',
    'error',
    '-y',
    '-i',
    `${server.url}${session.playlistUrl}`,
    '-c',
    'copy',
    copy,
  ]);
  const detail = (await (
    await fetch(`${server.url}/api/v1/stream/sessions/${session.sessionId}`, {
      headers: { authorization: `Bearer ${org.apiKey}` },
    })
  ).json()) as { bytesServed: number };
  return { session, copy, bytesServed: detail.bytesServed };
}

describe('content in an S3-compatible store', () => {
  it('is published to the bucket by drm ingest, nothing of it left on the local disk', async () => {
    const local = path.join(file('data'), 'content');
    const leftovers = fs.existsSync(local)
      ? fs.readdirSync(local).filter((n) => n !== '.staging' && n !== '.cache')
      : [];
    expect(leftovers).toEqual([]);
    expect(fs.readdirSync(path.join(local, '.staging'))).toEqual([]);
  });

  it(
    'plays to ffmpeg through the server (proxy), metered',
    async () => {
      const server = await startServe({ dataDir: file('data'), env });
      expect(server.info).toMatchObject({ store: `s3://${s3.bucket}/content`, segmentDelivery: 'proxy' });
      org = await registerOver(server.url, 'Bucket Films');
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
      const played = await playThrough(server, 'proxy-viewer');
      expect((await probeMedia(bins, played.copy)).duration).toBeGreaterThan(20);
      expect(played.bytesServed).toBeGreaterThan(100_000);
      await server.stop();
    },
    T,
  );

  it(
    'plays to ffmpeg by redirect: a 302 to a presigned URL that names no variant, the object counted when handed out',
    async () => {
      const server = await startServe({ dataDir: file('data'), env: { ...env, DRM_SEGMENT_DELIVERY: 'redirect' } });
      expect(server.info).toMatchObject({ segmentDelivery: 'redirect' });
      const played = await playThrough(server, 'redirect-viewer');
      expect((await probeMedia(bins, played.copy)).duration).toBeGreaterThan(20);
      expect(played.bytesServed).toBeGreaterThan(100_000);
      const playlist = await (await fetch(`${server.url}${played.session.playlistUrl}`)).text();
      const segmentUrl = playlist.split('\n').find((l) => l.includes('/segment/')) as string;
      const answer = await fetch(`${server.url}${segmentUrl}`, { redirect: 'manual' });
      expect(answer.status).toBe(302);
      const location = answer.headers.get('location') as string;
      expect(location.startsWith(`${s3.endpoint}/${s3.bucket}/content/${filmId}/`)).toBe(true);
      expect(location).toMatch(/X-Amz-Expires=50/);
      expect(new URL(location).pathname).not.toMatch(/\/a\/|\/b\/|\.ts$|0000/);
      expect((await fetch(location)).status).toBe(200);
      await server.stop();
    },
    T,
  );

  it(
    'traces a leak against the detection reference and the segments kept in the bucket',
    async () => {
      const r = await runDrm(
        [
          'analyze',
          file('redirect-viewer.ts'),
          '--content',
          filmId,
          '--data-dir',
          file('data'),
          '--json',
          '--report',
          file('case.html'),
        ],
        env,
        T,
      );
      // The 22-s film has 3 segments: only bits 0-2 are in the leak, too few to name anyone among two
      // viewers (an innocent would fit 3 bits too often). The leaker is among the candidates who fit.
      expect(r.code, r.stderr).toBe(2);
      const body = JSON.parse(r.stdout) as {
        classification: string;
        evidenceChain: unknown;
        analysis: { candidateSet: Array<{ viewerId: string }> };
      };
      const { 'redirect-viewer': leaker } = viewers as Record<string, { viewerId: string; binaryId: string }>;
      expect(body).toMatchObject({ classification: 'weak_match', evidenceChain: null });
      expect(body.analysis.candidateSet.map((c) => c.viewerId)).toContain(leaker?.viewerId);
      // The pictures of the report come from variant A's segments in the bucket.
      expect(
        fs.readFileSync(file('case.html'), 'utf8').match(/<img src="data:image\/jpeg;base64,/g)?.length,
      ).toBeGreaterThanOrEqual(2);
    },
    T,
  );

  it(
    'removes an item from the bucket when it is deleted (the row stays as a tombstone: sessions name it)',
    async () => {
      const keys = async () =>
        (
          await s3Client({ endpoint: s3.endpoint }).send(
            new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `content/${filmId}/` }),
          )
        ).KeyCount ?? 0;
      expect(await keys()).toBeGreaterThan(10);
      const out = JSON.parse(
        await drm(['content', 'delete', filmId, '--force', '--data-dir', file('data'), '--json'], env),
      ) as { outcome: string };
      expect(out.outcome).toBe('tombstone');
      expect(await keys()).toBe(0);
    },
    T,
  );
});
