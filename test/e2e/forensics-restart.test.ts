import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaBinaries } from '../../src/media/binaries.js';
import { registerOver } from '../helpers/fixtures.js';
import { makePanFilm } from '../helpers/media.js';
import { drm, killAll, startServe } from '../helpers/serve-process.js';

// ?async=true hands the leak to a queue kept in the database: a server killed outright while the
// case waits or runs loses nothing. The next server on the data directory takes the case once
// its lease runs out (5 s here, DRM_ANALYSIS_LEASE_SECONDS) and completes it.
const T = 300_000;
const bins = mediaBinaries();
const env = { DRM_ANALYSIS_LEASE_SECONDS: '5' };
let dir: string;
let dataDir: string;
let filmId: string;
const file = (name: string) => path.join(dir, name);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-restart-'));
  dataDir = file('data');
  makePanFilm(file('film.mp4'), 22);
  execFileSync(bins.ffmpeg, [
    '-v',
    'error',
    '-y',
    '-i',
    file('film.mp4'),
    '-ss',
    '3',
    '-vf',
    'scale=1280:720',
    '-c:v',
    'libx264',
    '-crf',
    '28',
    '-preset',
    'veryfast',
    file('copy.mp4'),
  ]);
  await drm(['migrate', '--data-dir', dataDir]);
  filmId = (
    JSON.parse(
      await drm([
        'ingest',
        file('film.mp4'),
        '--title',
        'Pan',
        '--type',
        'video',
        '--watermark',
        '--data-dir',
        dataDir,
        '--json',
      ]),
    ) as { contentId: string }
  ).contentId;
}, T);
afterAll(() => {
  killAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the forensics queue across a restart', () => {
  it(
    'completes a case whose server was killed with SIGKILL, on the next server, and removes its upload',
    async () => {
      let server = await startServe({ dataDir, env });
      const org = await registerOver(server.url, 'Restart Films');
      await drm([
        'admin',
        'license',
        '--org',
        org.organizationId,
        '--content',
        filmId,
        '--type',
        'video',
        '--watermark',
        '--data-dir',
        dataDir,
      ]);
      const auth = { authorization: `Bearer ${org.apiKey}` };
      const form = new FormData();
      form.set('contentId', filmId);
      form.set('contentType', 'video');
      form.set('file', new File([await fs.openAsBlob(file('copy.mp4'))], 'copy.mp4'));
      const res = await fetch(`${server.url}/api/v1/forensics/analyze?async=true`, {
        method: 'POST',
        headers: auth,
        body: form,
      });
      expect(res.status).toBe(202);
      const { caseId } = (await res.json()) as { caseId: string };
      await server.stop('SIGKILL');
      const uploads = path.join(dataDir, 'uploads');
      expect(fs.readdirSync(uploads)).toHaveLength(1);

      server = await startServe({ dataDir, env });
      const started = Date.now();
      let body: { case: { status: string; classification: string | null } } | undefined;
      await expect
        .poll(
          async () => {
            body = (await (
              await fetch(`${server.url}/api/v1/forensics/cases/${caseId}`, { headers: auth })
            ).json()) as typeof body;
            return body?.case.status;
          },
          { timeout: 120_000, interval: 1000 },
        )
        .toBe('completed');
      // Nobody streamed the film: the copy is analysed against no candidates.
      expect(body?.case.classification).toBe('no_match');
      expect(Date.now() - started).toBeLessThan(120_000);
      // the case keeps its leak for --keep-leaks: the one file, nothing more
      expect(fs.readdirSync(uploads)).toHaveLength(1);
      await server.stop();
    },
    T,
  );
});
