import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePanFilm } from '../helpers/media.js';
import { drm, killAll, runDrm, startServe } from '../helpers/serve-process.js';

// `drm worker` on a data directory (SQLite, the disk store). A worker that dies mid-ingest
// leaves its job to the next one once its lease runs out; a worker told to stop gives its job
// back at once. Either way the job is ingested once, by the worker that finishes it. A job
// cancelled while it runs is stopped by its worker, leaving nothing made.

const T = 600_000;
let dir: string;
const env = { DRM_ANALYSIS_LEASE_SECONDS: '5' };
const data = () => ['--data-dir', path.join(dir, 'data')];

interface JobView {
  id: string;
  status: string;
  attempts: number;
  worker: string | null;
  progress: { stage: string } | null;
  contentId: string | null;
}

const show = async (id: string) => JSON.parse(await drm(['jobs', 'show', id, '--json', ...data()], env)) as JobView;
const startWorker = () =>
  startServe({ dataDir: path.join(dir, 'data'), command: ['worker', '--jobs', 'ingest'], env, logLevel: 'info' });

/** Polls the job (through the CLI: one SQLite writer per process) until `done` says so. */
async function jobUntil(id: string, done: (job: JobView) => boolean): Promise<JobView> {
  const end = Date.now() + T / 2;
  for (;;) {
    const job = await show(id);
    if (done(job)) return job;
    if (Date.now() > end) throw new Error(`job ${id} stayed ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function queueFilm(title: string): Promise<string> {
  const out = await drm(
    [
      'ingest',
      path.join(dir, 'film.mp4'),
      '--title',
      title,
      '--type',
      'video',
      '--watermark',
      '--queue',
      '--json',
      ...data(),
    ],
    env,
  );
  return (JSON.parse(out) as JobView).id;
}

/** Taken and under way: the worker has fetched the source and written its first stage. */
const underWay = (job: JobView) => job.status === 'running' && job.progress !== null;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-worker-'));
  makePanFilm(path.join(dir, 'film.mp4'), 22);
  await drm(['migrate', ...data()], env);
}, T);
afterAll(() => {
  killAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('drm worker', () => {
  it(
    'leaves the job of a worker killed mid-ingest to the next worker once its lease runs out, and it is ingested once',
    async () => {
      const id = await queueFilm('Killed');
      const first = await startWorker();
      expect(first.info).toMatchObject({ jobs: ['ingest'], db: 'sqlite' });
      const taken = await jobUntil(id, underWay);
      expect(taken).toMatchObject({ worker: first.info.worker, attempts: 1 });
      await first.stop('SIGKILL');
      const second = await startWorker();
      const done = await jobUntil(id, (j) => j.status === 'done');
      expect(done).toMatchObject({ worker: second.info.worker, attempts: 2 });
      const listed = JSON.parse(await drm(['content', 'list', '--json', ...data()], env)) as {
        content: Array<{ id: string; title: string }>;
      };
      expect(listed.content.filter((c) => c.title === 'Killed').map((c) => c.id)).toEqual([done.contentId]);
      await second.stop();
    },
    T,
  );

  it(
    'gives its job back to the queue on SIGTERM and exits 0; the next worker ingests it',
    async () => {
      const id = await queueFilm('Stopped');
      const first = await startWorker();
      await jobUntil(id, underWay);
      expect(await first.stop('SIGTERM'), first.stderr()).toEqual({ code: 0, signal: null });
      expect(first.stderr()).toContain('"ingest job given back to the queue"');
      expect(await show(id)).toMatchObject({ status: 'queued', worker: null, attempts: 0 });
      const second = await startWorker();
      expect(await jobUntil(id, (j) => j.status === 'done')).toMatchObject({ worker: second.info.worker, attempts: 1 });
      await second.stop();
      // The sources are gone from the spool with their jobs; no staging is left behind.
      expect(fs.readdirSync(path.join(dir, 'data', 'uploads'))).toEqual([]);
      expect(fs.readdirSync(path.join(dir, 'data', 'content', '.staging'))).toEqual([]);
    },
    T,
  );

  it(
    'stops a running job cancelled with drm jobs cancel at its next lease renewal, leaving nothing made; retry ingests it',
    async () => {
      const id = await queueFilm('Cancelled');
      const w = await startWorker();
      await jobUntil(id, underWay);
      const cancel = await runDrm(['jobs', 'cancel', id, ...data()], env);
      expect(cancel.code, cancel.stderr).toBe(0);
      expect(cancel.stdout).toContain(`cancelled ingest job ${id}; its worker ${w.info.worker} stops it within 2 s`);
      await w.waitForStderr('"ingest job cancelled"');
      expect(await show(id)).toMatchObject({ status: 'cancelled', progress: null });
      // What the attempt made is gone; its source stays for the retry.
      expect(fs.readdirSync(path.join(dir, 'data', 'content', '.staging'))).toEqual([]);
      expect(fs.readdirSync(path.join(dir, 'data', 'uploads'))).toHaveLength(1);
      await drm(['jobs', 'retry', id, ...data()], env);
      expect(await jobUntil(id, (j) => j.status === 'done')).toMatchObject({ worker: w.info.worker, attempts: 1 });
      await w.stop();
      expect(fs.readdirSync(path.join(dir, 'data', 'uploads'))).toEqual([]);
    },
    T,
  );

  it(
    'refuses --wait without --queue, --backend with it, an unknown job and an unknown organization, in one line each',
    async () => {
      const film = path.join(dir, 'film.mp4');
      const wait = await runDrm(['ingest', film, '--title', 'X', '--type', 'video', '--wait', ...data()], env);
      expect(wait).toMatchObject({
        code: 2,
        stderr: 'drm: --wait goes with --queue (an ingest without --queue runs here and always waits)\n',
      });
      const unknown = await runDrm(['jobs', 'show', 'no-such-job', ...data()], env);
      expect(unknown).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/^drm: ingest job no-such-job not found\n$/),
      });
      const backend = await runDrm(
        ['ingest', film, '--title', 'X', '--type', 'video', '--queue', '--backend', 'cpu', ...data()],
        env,
      );
      expect(backend).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(
          /^drm: --backend applies to an ingest run here; a queued one is marked with its worker's backend/,
        ),
      });
      const org = await runDrm(
        ['ingest', film, '--title', 'X', '--type', 'video', '--queue', '--org', 'no-such-org', ...data()],
        env,
      );
      expect(org).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/^drm: organization no-such-org not found\n$/),
      });
    },
    T,
  );
});
