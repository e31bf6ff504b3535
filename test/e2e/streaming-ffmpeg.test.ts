import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePanFilm } from '../helpers/media.js';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import { buildCudaShim } from '../../gpu/cuda/shim/build.js';
import { loadServerSecret } from '../../src/crypto/secret.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { probeMedia } from '../../src/media/probe.js';
import { watermarkKey } from '../../src/watermark/keyed-random.js';
import { detectVideo } from '../../src/watermark/video/detect.js';
import { contentRowsIn, registerOver } from '../helpers/fixtures.js';
import { drm, killAll, runDrm, type ServeProcess, startServe } from '../helpers/serve-process.js';
import { keyedRule, positionOf, segmentRuleKey, servedBit } from '../../src/watermark/segment-rule.js';

// The content team's and the player's side for real: `drm ingest` from the command line into a
// data directory, `drm serve` on it, and ffmpeg as the player, reading each session's playlist
// URL over HTTP (AES-128 included). Then the watermark engine reads each viewer's own bits from
// what that viewer received.
const T = 300_000;
const bins = mediaBinaries();
/** Debian's ffmpeg, not the bundled static build. */
const SYSTEM_FFMPEG = process.env.DRM_SYSTEM_FFMPEG ?? '/usr/bin/ffmpeg';
let dir: string;
let dataDir: string;
let server: ServeProcess;
let filmId: string;
let org: { organizationId: string; apiKey: string };
const file = (name: string) => path.join(dir, name);
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-players-'));
  dataDir = file('data');
  makePanFilm(file('film.mp4'), 22);
  fs.writeFileSync(file('notes.txt'), 'not a film\n'.repeat(100));
  await drm(['migrate', '--data-dir', dataDir]);
  const out = JSON.parse(
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
  ) as Record<string, unknown>;
  filmId = out.contentId as string;
  server = await startServe({ dataDir });
  org = await registerOver(server.url, 'Players Inc');
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
}, T);
afterAll(() => {
  killAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

const contentRows = () => contentRowsIn(path.join(dataDir, 'drm.db'));

async function startSession(viewerId: string) {
  const res = await fetch(`${server.url}/api/v1/stream/${filmId}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ viewerId }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { sessionId: string; playlistUrl: string; binaryId: string; viewerId: string };
}

describe('drm ingest on the command line', () => {
  it(
    'says what it ingested, which DTCWT backend marked it and how long each stage took',
    async () => {
      const r = await runDrm([
        'ingest',
        file('film.mp4'),
        '--title',
        'Again',
        '--type',
        'video',
        '--watermark',
        '--data-dir',
        dataDir,
      ]);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/watermarking with DTCWT backend cpu/);
      expect(r.stdout).toMatch(
        /ingested "Again" as [0-9a-f-]{36}: video, 360p, watermarked \(variants A and B\), 22 s in 3 AES-128 segment/,
      );
      // from the process's start, then the library's stages; the short ones left out
      expect(r.stdout).toMatch(/^time by stage: cli-start \d+\.\d s, .*package \d+\.\d s/m);
    },
    T,
  );

  it(
    'marks on the CUDA backend (its kernels on the CPU shim), and records a turn to the CPU in the result',
    async () => {
      const args = ['ingest', file('film.mp4'), '--title', 'On the GPU', '--type', 'video', '--watermark'];
      // streams that run their work only when waited for, as a GPU's do: the shim says any race on stderr
      const env = { DRM_BACKEND: 'cuda', DRM_CUDA_LIBRARY: buildCudaShim({ deferred: true }) };
      const r = await runDrm([...args, '--data-dir', dataDir], env);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/watermarking with DTCWT backend cuda \(drm CPU shim \(compute 8\.0, driver 13\.0\)\)/);
      expect(r.stderr).not.toContain('drm CUDA shim:');
      // A launch that fails mid-film: the film is finished on the CPU, and the result says so.
      const failing = await runDrm([...args, '--json', '--data-dir', dataDir], {
        DRM_BACKEND: 'cuda',
        DRM_CUDA_LIBRARY: buildCudaShim(),
        DRM_CUDA_SHIM_FAIL_LAUNCH: '3000',
      });
      expect(failing.code).toBe(0);
      const result = JSON.parse(failing.stdout) as { backend: string; segmentCount: number };
      expect(result.backend).toMatch(
        /^cpu \(\d+ workers?\) after CUDA failed on drm CPU shim .*CUDA_ERROR_LAUNCH_FAILED/,
      );
      expect(result.segmentCount).toBe(3);
      expect(failing.stderr).toMatch(/CUDA backend failed .*finishing on the CPU/);
    },
    T,
  );

  it(
    'refuses a file that is not media, or music as video, in one line with exit code 2',
    async () => {
      const notMedia = await runDrm([
        'ingest',
        file('notes.txt'),
        '--title',
        'x',
        '--type',
        'video',
        '--data-dir',
        dataDir,
      ]);
      expect(notMedia.code).toBe(2);
      expect(notMedia.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^drm: notes\.txt is not a media file/),
      ]);
      const noType = await runDrm(['ingest', file('film.mp4'), '--title', 'x', '--data-dir', dataDir]);
      expect(noType.code).toBe(2);
    },
    T,
  );

  it(
    'cancelled with Ctrl-C, leaves no files and no catalog entry',
    async () => {
      const { spawn } = await import('node:child_process');
      const { DRM_BIN, ROOT } = await import('../helpers/serve-process.js');
      const before = fs.readdirSync(path.join(dataDir, 'content')).sort();
      const rowsBefore = await contentRows();
      const child = spawn(
        process.execPath,
        [
          DRM_BIN,
          'ingest',
          file('film.mp4'),
          '--title',
          'Cancelled',
          '--type',
          'video',
          '--watermark',
          '--data-dir',
          dataDir,
        ],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const staging = path.join(dataDir, 'content', '.staging');
      await expect
        .poll(() => fs.existsSync(staging) && fs.readdirSync(staging).length > 0, { timeout: 60_000, interval: 50 })
        .toBe(true);
      child.kill('SIGINT');
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(130);
      expect(stderr).toMatch(/ingest cancelled; nothing was published/);
      expect(fs.readdirSync(path.join(dataDir, 'content')).sort()).toEqual(before);
      expect(fs.readdirSync(staging)).toEqual([]);
      expect(await contentRows()).toBe(rowsBefore);
    },
    T,
  );
});

describe('ffmpeg as the player', () => {
  it(
    "reads a session's playlist through drm serve and decodes every segment, AES-128 included",
    async () => {
      const s = await startSession('ffmpeg-viewer');
      const decode = spawnSync(bins.ffmpeg, ['-v', 'error', '-i', `${server.url}${s.playlistUrl}`, '-f', 'null', '-'], {
        encoding: 'utf8',
      });
      expect(decode.status, decode.stderr).toBe(0);
      expect(decode.stderr).toBe('');
      ff('-i', `${server.url}${s.playlistUrl}`, '-c', 'copy', file('received.mp4'));
      const info = await probeMedia(bins, file('received.mp4'));
      expect(info.duration).toBeGreaterThan(21);
      expect(info.video).toMatchObject({ width: 640, height: 360 });
      expect(info.audio?.codec).toBe('aac');
      // The session kept the address the request came from (the socket's: no proxy is trusted).
      const session = await fetch(`${server.url}/api/v1/stream/sessions/${s.sessionId}`, {
        headers: { authorization: `Bearer ${org.apiKey}` },
      });
      expect(await session.json()).toMatchObject({
        ipAddress: '127.0.0.1',
        isActive: true,
        bytesServed: expect.any(Number),
      });
    },
    T,
  );

  it(
    "Debian's own ffmpeg plays a session with no extra options (segment URIs end in .ts)",
    async () => {
      // The system build (.ci/run installs Debian's ffmpeg), whose 2025 HLS fixes refuse segment
      // URIs without a media extension unless told otherwise: players must not need telling.
      // A viewer whose bits move between variants A and B on the film's three segments, so that
      // the copy crosses a switch (a viewer whose three bits are alike never leaves one variant).
      let s = await startSession('debian-ffmpeg-viewer-0');
      for (let i = 1; /^(0{3}|1{3})/.test(s.binaryId); i++) s = await startSession(`debian-ffmpeg-viewer-${i}`);
      const out = file('debian.ts');
      // Debug level only to see the demuxer's continuity check, which it logs there (playing needs no option).
      const play = spawnSync(
        SYSTEM_FFMPEG,
        ['-hide_banner', '-loglevel', 'debug', '-i', `${server.url}${s.playlistUrl}`, '-c', 'copy', out],
        { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
      );
      expect(play.error, `${SYSTEM_FFMPEG} must be installed (apt-get install ffmpeg)`).toBeUndefined();
      expect(play.status, play.stderr).toBe(0);
      expect(play.stderr).not.toMatch(/allowed_segment_extensions|not in allowed/);
      // Ingest marks each segment's first packet of every PES stream as a discontinuity, so the
      // continuity counters that jump where A and B meet are expected: no packet is taken for corrupt.
      const complaints = play.stderr.split('\n').filter((l) => /Packet corrupt|Continuity check failed/.test(l));
      expect(complaints, `viewer ${s.binaryId.slice(0, 3)}`).toEqual([]);
      const info = await probeMedia(bins, out);
      expect(info.duration).toBeGreaterThan(21);
      expect(info.video).toMatchObject({ width: 640, height: 360 });
      // What it wrote decodes, to the last frame, without a complaint from the same ffmpeg.
      const decode = spawnSync(SYSTEM_FFMPEG, ['-v', 'error', '-i', out, '-f', 'null', '-'], { encoding: 'utf8' });
      expect(decode.status).toBe(0);
      expect(decode.stderr).toBe('');
    },
    T,
  );

  it(
    'after DELETE of the session, the key and the segments are refused',
    async () => {
      const s = await startSession('deleted-viewer');
      const del = await fetch(`${server.url}/api/v1/stream/sessions/${s.sessionId}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${org.apiKey}` },
      });
      expect(await del.json()).toEqual({ success: true });
      expect((await fetch(`${server.url}/api/v1/stream/${filmId}/key?session=${s.sessionId}`)).status).toBe(403);
      expect((await fetch(`${server.url}/api/v1/stream/${filmId}/segment/0?session=${s.sessionId}`)).status).toBe(403);
      const decode = spawnSync(bins.ffmpeg, ['-v', 'error', '-i', `${server.url}${s.playlistUrl}`, '-f', 'null', '-'], {
        encoding: 'utf8',
      });
      expect(decode.status).not.toBe(0);
    },
    T,
  );

  it(
    'each of two viewers receives its own watermark: the detector reads its bits from its copy',
    async () => {
      // The film was ingested by this version: its segments carry the bits its keyed rule says.
      const secret = loadServerSecret(dataDir);
      const rule = keyedRule(segmentRuleKey(secret), filmId);
      const served = (binaryId: string) => [0, 1, 2].map((s) => servedBit(rule, binaryId, s)).join('');
      // Two viewers served differently on the three segments the film has.
      const first = await startSession('wm-viewer-0');
      let second = await startSession('wm-viewer-1');
      for (let i = 2; served(second.binaryId) === served(first.binaryId); i++)
        second = await startSession(`wm-viewer-${i}`);
      const key = watermarkKey(secret);
      const backend = createCpuPoolBackend();
      try {
        for (const [name, s] of [
          ['first', first],
          ['second', second],
        ] as const) {
          const copy = file(`${name}.mp4`);
          ff('-i', `${server.url}${s.playlistUrl}`, '-c', 'copy', copy);
          const d = await detectVideo({
            rule,
            bins,
            key,
            contentId: filmId,
            leak: copy,
            original: file('film.mp4'),
            backend,
          });
          expect(d.segments.map((x) => x.index)).toEqual([0, 1, 2]);
          expect(d.segments.map((x) => x.bit).join(''), `${name} viewer ${s.binaryId}`).toBe(served(s.binaryId));
          const carried = [0, 1, 2].map((x) => positionOf(rule, x));
          expect(carried.map((p) => d.bits[p]).join('')).toBe(carried.map((p) => s.binaryId[p]).join(''));
        }
      } finally {
        await backend.close();
      }
    },
    T,
  );
});
