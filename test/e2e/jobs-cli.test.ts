import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePanFilm } from '../helpers/media.js';
import { drm, killAll, runDrm, startServe } from '../helpers/serve-process.js';

// `drm jobs cancel` and `drm jobs retry` on a data directory: a queued ingest is cancelled (no
// worker runs yet), listed as such, queued again and ingested by a worker; a done job and an
// unknown id are refused in one line each.

const T = 300_000;
let dir: string;
const env = { DRM_ANALYSIS_LEASE_SECONDS: '5' };
const data = () => ['--data-dir', path.join(dir, 'data')];

interface JobView {
  id: string;
  status: string;
  attempts: number;
  contentId: string | null;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-jobs-'));
  makePanFilm(path.join(dir, 'clip.mp4'), 3);
  await drm(['migrate', ...data()], env);
}, T);
afterAll(() => {
  killAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('drm jobs cancel and retry', () => {
  it(
    'cancels a queued ingest, lists it cancelled, queues it again, and a worker ingests it once',
    async () => {
      const clip = path.join(dir, 'clip.mp4');
      const queued = JSON.parse(
        await drm(['ingest', clip, '--title', 'Clip', '--type', 'video', '--queue', '--json', ...data()], env),
      ) as JobView;
      const id = queued.id;
      const listed = JSON.parse(await drm(['jobs', 'list', '--json', ...data()], env)) as { jobs: JobView[] };
      expect(listed.jobs).toMatchObject([{ id, status: 'queued' }]);

      const cancel = await runDrm(['jobs', 'cancel', id, ...data()], env);
      expect(cancel).toMatchObject({ code: 0, stderr: '' });
      expect(cancel.stdout).toMatch(
        new RegExp(
          `^cancelled ingest job ${id} \\(its source is kept 3 days: drm jobs retry ${id} queues it again\\)\\n$`,
        ),
      );
      expect(await drm(['jobs', 'list', ...data()], env)).toMatch(new RegExp(`${id}.*│ cancelled`));
      const again = await runDrm(['jobs', 'cancel', id, ...data()], env);
      expect(again).toMatchObject({
        code: 2,
        stdout: '',
        stderr: `drm: ingest job ${id} cancelled already: only a queued or running job can be cancelled; drm jobs retry queues it again\n`,
      });

      const retried = JSON.parse(await drm(['jobs', 'retry', id, '--json', ...data()], env)) as JobView;
      expect(retried).toMatchObject({ id, status: 'queued', attempts: 0, contentId: null });
      const worker = await startServe({
        dataDir: path.join(dir, 'data'),
        command: ['worker', '--jobs', 'ingest'],
        env,
      });
      const done = await runDrm(['jobs', 'show', id, '--wait', '--json', ...data()], env, T);
      await worker.stop();
      expect(done.code, done.stderr).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({ id, status: 'done', attempts: 1 });
      // Its source went with its end: nothing is left in the spool.
      expect(fs.readdirSync(path.join(dir, 'data', 'uploads'))).toEqual([]);

      const doneCancel = await runDrm(['jobs', 'cancel', id, ...data()], env);
      expect(doneCancel).toMatchObject({ code: 2, stdout: '' });
      expect(doneCancel.stderr).toMatch(
        new RegExp(
          `^drm: ingest job ${id} is done \\(content [0-9a-f-]{36}\\): only a queued or running job can be cancelled\\n$`,
        ),
      );
      const doneRetry = await runDrm(['jobs', 'retry', id, ...data()], env);
      expect(doneRetry).toMatchObject({ code: 2, stdout: '' });
      expect(doneRetry.stderr).toMatch(
        /^drm: ingest job \S+ is done \(content [0-9a-f-]{36}\); only a failed or cancelled job is retried\n$/,
      );
    },
    T,
  );

  it('refuses an unknown job in one line, as drm jobs show does', async () => {
    for (const verb of ['cancel', 'retry']) {
      const r = await runDrm(['jobs', verb, 'no-such-job', ...data()], env);
      expect(r).toMatchObject({ code: 1, stdout: '', stderr: 'drm: ingest job no-such-job not found\n' });
    }
  });
});
