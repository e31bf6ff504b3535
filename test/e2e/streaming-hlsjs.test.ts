import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaBinaries } from '../../src/media/binaries.js';
import { registerOver } from '../helpers/fixtures.js';
import { playIn, type PlayerSite, startPlayerSite } from '../helpers/hlsjs-player.js';
import { drm, killAll, type ServeProcess, startServe } from '../helpers/serve-process.js';

// hls.js, the player most sites embed, in Debian's headless Chromium: a page on its own origin
// (as on an organization's site) plays a session of `drm serve` through MSE, AES-128 included.
const T = 300_000;
const bins = mediaBinaries();
let dir: string;
let server: ServeProcess;
let site: PlayerSite;
let filmId: string;
let org: { organizationId: string; apiKey: string };

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-hlsjs-'));
  const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
  ff(
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=640x360:rate=25',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=44100',
    '-t',
    '24',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    path.join(dir, 'film.mp4'),
  );
  const dataDir = path.join(dir, 'data');
  await drm(['migrate', '--data-dir', dataDir]);
  filmId = (
    JSON.parse(
      await drm([
        'ingest',
        path.join(dir, 'film.mp4'),
        '--title',
        'Test card',
        '--type',
        'video',
        '--data-dir',
        dataDir,
        '--json',
      ]),
    ) as { contentId: string }
  ).contentId;
  server = await startServe({ dataDir });
  org = await registerOver(server.url, 'Web Player Co');
  await drm([
    'admin',
    'license',
    '--org',
    org.organizationId,
    '--content',
    filmId,
    '--type',
    'video',
    '--data-dir',
    dataDir,
  ]);
  site = await startPlayerSite(path.join(dir, 'profile'));
}, T);
afterAll(async () => {
  await site?.close();
  killAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('hls.js in headless Chromium', () => {
  it(
    'plays a session past 10 s; after DELETE of the session its key and segments are refused',
    async () => {
      const res = await fetch(`${server.url}/api/v1/stream/${filmId}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ viewerId: 'browser-viewer' }),
      });
      const s = (await res.json()) as { sessionId: string; playlistUrl: string };
      const { tab, currentTime, errors } = await playIn(site, `${server.url}${s.playlistUrl}`);
      await expect.poll(currentTime, { timeout: 60_000, interval: 500 }).toBeGreaterThan(10);
      expect((await errors()).filter((e) => e.includes('fatal'))).toEqual([]);

      const del = await fetch(`${server.url}/api/v1/stream/sessions/${s.sessionId}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${org.apiKey}` },
      });
      expect(await del.json()).toEqual({ success: true });
      const refused = await tab.evaluate(
        async ([base, id, session]) => {
          const key = await fetch(`${base}/api/v1/stream/${id}/key?session=${session}`);
          const segment = await fetch(`${base}/api/v1/stream/${id}/segment/2?session=${session}`);
          return [key.status, segment.status, (await segment.json()).code];
        },
        [server.url, filmId, s.sessionId],
      );
      expect(refused).toEqual([403, 403, 'SESSION_EXPIRED']);
    },
    T,
  );
});
