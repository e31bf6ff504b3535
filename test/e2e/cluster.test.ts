import { execFile } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaBinaries } from '../../src/media/binaries.js';
import { probeMedia } from '../../src/media/probe.js';
import { s3Client } from '../../src/storage/s3-store.js';
import { freshDatabaseUrl } from '../helpers/context.js';
import { type FailoverProxy, startFailoverProxy } from '../helpers/failover-proxy.js';
import { makePanFilm } from '../helpers/media.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { drm, killAll, runDrm, type ServeProcess, startServe } from '../helpers/serve-process.js';

// A deployment of several machines, each with a disk of its own. One Postgres,
// one S3 server (s3rver), two `drm serve` that leave analyses to workers, one `drm worker`, and a
// CLI on a third machine. Nothing is shared but the database, the bucket and DRM_SECRET.

const T = 600_000;
const bins = mediaBinaries();
let dir: string;
let db: string;
let s3: TestS3;
let env: NodeJS.ProcessEnv;
let worker: ServeProcess;
let server1: ServeProcess;
let server2: ServeProcess;
let hook: Awaited<ReturnType<typeof webhookReceiver>>;
let filmId: string;
/** an unmarked trailer the other viewers watch, so that only the leaker streamed the film */
let trailerId: string;
let org: { organizationId: string; apiKey: string; webhookSecret: string };
const machine = (name: string) => path.join(dir, name);
const onMachine = (name: string) => ['--db', db, '--data-dir', machine(name)];

/** The organization's webhook endpoint: every delivery it hears, its signature checked. */
async function webhookReceiver() {
  const heard: Array<{ id: string; type: string; signed: boolean }> = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const { id, type } = JSON.parse(body.toString('utf8')) as { id: string; type: string };
    const signed =
      createHmac('sha256', org?.webhookSecret ?? '')
        .update(body)
        .digest('hex') === req.headers['x-service-signature'];
    heard.push({ id, type, signed });
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    heard,
    close: () => new Promise((r) => server.close(() => r(undefined))),
  };
}

async function api(base: string, method: string, route: string, body?: unknown) {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${org.apiKey}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-cluster-'));
  [db, s3, hook] = await Promise.all([freshDatabaseUrl('postgres', dir), startS3(), webhookReceiver()]);
  env = {
    DRM_SECRET: randomBytes(24).toString('hex'),
    DRM_STORE: `s3://${s3.bucket}/content`,
    DRM_S3_ENDPOINT: s3.endpoint,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    DRM_ANALYSIS_LEASE_SECONDS: '30',
  };
  makePanFilm(path.join(dir, 'film.mp4'), 22);
  await drm(['migrate', ...onMachine('cli')], env);
  const serving = { env: { ...env, DRM_ALLOW_PRIVATE_WEBHOOKS: 'yes' }, args: ['--no-analysis'], logLevel: 'info' };
  [worker, server1, server2] = await Promise.all([
    startServe({ dataDir: machine('worker'), db, env, command: ['worker'], logLevel: 'info' }),
    startServe({ dataDir: machine('server1'), db, ...serving }),
    startServe({ dataDir: machine('server2'), db, ...serving }),
  ]);
}, T);

afterAll(async () => {
  await Promise.all([server2?.stop(), worker?.stop()]);
  killAll();
  await Promise.all([s3?.close(), hook?.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
}, T);

describe('a cluster: two servers, one worker, one Postgres, one S3 store', () => {
  it(
    'runs an ingest queued from a third machine on the worker, and publishes it to the bucket',
    async () => {
      expect(worker.info).toMatchObject({
        jobs: ['ingest', 'analysis'],
        db: 'postgres',
        store: `s3://${s3.bucket}/content`,
      });
      expect(String(worker.info.backend)).toMatch(/^cpu|^cuda/);
      expect(server1.info).toMatchObject({ analysis: false, store: `s3://${s3.bucket}/content` });
      const args = [
        'ingest',
        path.join(dir, 'film.mp4'),
        '--title',
        'Pan',
        '--type',
        'video',
        '--watermark',
        '--queue',
        '--wait',
        '--json',
        ...onMachine('cli'),
      ];
      const job = JSON.parse(await drm(args, env)) as {
        status: string;
        worker: string;
        contentId: string;
        result: { segmentCount: number };
      };
      expect(job).toMatchObject({ status: 'done', worker: worker.info.worker });
      expect(job.result.segmentCount).toBe(3);
      filmId = job.contentId;
      // The source went from the CLI to the bucket's spool, and is gone from it now that the job is done.
      const listed = await s3Client({ endpoint: s3.endpoint }).send(
        new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'content/' }),
      );
      const keys = (listed.Contents ?? []).map((o) => o.Key as string);
      expect(keys.filter((k) => k.includes('/.spool/'))).toEqual([]);
      expect(keys.filter((k) => k.startsWith(`content/${filmId}/`)).length).toBeGreaterThan(10);
      // No machine but the worker's saw the film, and the worker's disk kept none of it.
      expect(fs.existsSync(path.join(machine('server1'), 'content', filmId))).toBe(false);
      expect(fs.readdirSync(path.join(machine('worker'), 'uploads'))).toEqual([]);
    },
    T,
  );

  it(
    'counts rate limits and webhooks once across both servers',
    async () => {
      const reg = await fetch(`${server1.url}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Cluster Films', webhookUrl: hook.url }),
      });
      expect(reg.status).toBe(201);
      org = (await reg.json()) as typeof org;
      await drm(
        ['admin', 'license', '--org', org.organizationId, '--content', filmId, '--type', 'video', ...onMachine('cli')],
        env,
      );
      // The trailer is ingested by the CLI itself, straight into the bucket.
      const trailer = [
        'ingest',
        path.join(dir, 'film.mp4'),
        '--title',
        'Trailer',
        '--type',
        'video',
        '--json',
        ...onMachine('cli'),
      ];
      trailerId = (JSON.parse(await drm(trailer, env)) as { contentId: string }).contentId;
      await drm(
        [
          'admin',
          'license',
          '--org',
          org.organizationId,
          '--content',
          trailerId,
          '--type',
          'video',
          '--no-watermark',
          ...onMachine('cli'),
        ],
        env,
      );
      // Six viewers start streams of the trailer, three on each server: each event is delivered once, signed.
      for (let i = 0; i < 6; i++)
        expect(
          (
            await api(i % 2 ? server2.url : server1.url, 'POST', `/api/v1/stream/${trailerId}`, {
              viewerId: `fan-${i}`,
            })
          ).status,
        ).toBe(201);
      await until('12 deliveries', async () => (hook.heard.length >= 12 ? true : undefined));
      await new Promise((r) => setTimeout(r, 3000));
      expect(hook.heard).toHaveLength(12);
      expect(new Set(hook.heard.map((h) => h.id)).size).toBe(12);
      expect(hook.heard.every((h) => h.signed)).toBe(true);
      expect(hook.heard.filter((h) => h.type === 'viewer.stream')).toHaveLength(6);

      await drm(['admin', 'rate-limit', '--org', org.organizationId, '--per-hour', '60', ...onMachine('cli')], env);
      const hourLeft = 3_600_000 - (Date.now() % 3_600_000);
      if (hourLeft < 30_000) await new Promise((r) => setTimeout(r, hourLeft + 1000));
      const first = await api(server1.url, 'GET', '/api/v1/auth/verify');
      const remaining = Number(first.headers.get('x-ratelimit-remaining'));
      const answers = await Promise.all(
        Array.from({ length: remaining + 4 }, (_, i) =>
          api(i % 2 ? server2.url : server1.url, 'GET', '/api/v1/auth/verify'),
        ),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(remaining);
      expect(answers.filter((a) => a.status === 429)).toHaveLength(4);
    },
    T,
  );

  let copy: string;
  let proxy: FailoverProxy;
  let sessionId: string;

  it(
    'keeps a player going through server 2 when server 1 is killed with SIGKILL mid-film, metered once',
    async () => {
      await drm(['admin', 'rate-limit', '--org', org.organizationId, '--per-hour', '100000', ...onMachine('cli')], env);
      let segments = 0;
      proxy = await startFailoverProxy([server1.url, server2.url], async (route) => {
        if (!route.includes('/segment/') || ++segments !== 2) return;
        // Segment 0 is counted (by server 1) before server 1 dies: then nothing is lost or counted twice.
        await until('segment 0 metered', async () =>
          ((await api(server2.url, 'GET', `/api/v1/stream/sessions/${sessionId}`)).body.bytesServed as number) > 0
            ? true
            : undefined,
        );
        expect(await server1.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
      });
      const started = await api(proxy.url, 'POST', `/api/v1/stream/${filmId}`, { viewerId: 'leaker' });
      expect(started.status).toBe(201);
      sessionId = started.body.sessionId as string;
      copy = path.join(dir, 'leak.ts');
      await promisify(execFile)(bins.ffmpeg, [
        '-v',
        'error',
        '-y',
        '-i',
        `${proxy.url}${started.body.playlistUrl as string}`,
        '-c',
        'copy',
        copy,
      ]);
      expect((await probeMedia(bins, copy)).duration).toBeGreaterThan(20);
      const served = proxy.answered.filter((a) => a.path.includes('/segment/'));
      expect(served.map((a) => [a.upstream, a.status])).toEqual([
        [0, 200],
        [1, 200],
        [1, 200],
      ]);
      const session = await api(server2.url, 'GET', `/api/v1/stream/sessions/${sessionId}`);
      expect(session.body.bytesServed).toBe(served.reduce((sum, a) => sum + a.bytes, 0));
      await proxy.close();
    },
    T,
  );

  it(
    'has the leak analysed by the worker, and the case read through server 2',
    async () => {
      const r = await runDrm(
        ['analyze', copy, '--content', filmId, '--server', server2.url, '--api-key', org.apiKey, '--json'],
        {},
        T,
      );
      expect([0, 2], r.stderr).toContain(r.code);
      // The leaker is the film's only viewer: a 3-segment leak names them.
      const answer = JSON.parse(r.stdout) as { caseId: string; classification: string };
      expect(answer.classification).toBe('strong_match');
      const caseId = answer.caseId;
      expect(worker.stderr()).toMatch(new RegExp(`"forensic case completed","caseId":"${caseId}"`));
      expect(server2.stderr()).toMatch(new RegExp(`"forensic case left to the workers","caseId":"${caseId}"`));
      expect(server2.stderr()).not.toContain('"forensic case completed"');
      const stored = await api(server2.url, 'GET', `/api/v1/forensics/cases/${caseId}`);
      expect(stored.body.case ?? stored.body).toMatchObject({ status: 'completed' });
      expect(JSON.stringify(stored.body)).toContain(sessionId);
      // The bucket's spool holds the leak the case keeps (--keep-leaks) and nothing else.
      const spool = await s3Client({ endpoint: s3.endpoint }).send(
        new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'content/.spool/' }),
      );
      expect(spool.KeyCount ?? 0).toBe(1);
    },
    T,
  );

  it(
    'stops the worker cleanly on SIGTERM',
    async () => {
      expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      expect(worker.stderr()).toContain('"worker stopped"');
    },
    T,
  );
});
