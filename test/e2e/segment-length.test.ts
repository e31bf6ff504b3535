import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServerSecret } from '../../src/crypto/secret.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { keyedRule, segmentRuleKey, servedBit } from '../../src/watermark/segment-rule.js';
import { registerOver } from '../helpers/fixtures.js';
import { makePanFilm } from '../helpers/media.js';
import { drm, killAll, runDrm, type ServeProcess, startServe } from '../helpers/serve-process.js';

// A content item cut in 2-s segments, for real: `drm ingest --segment-seconds 2`, `drm serve`,
// ffmpeg as the player, and `drm analyze` reading the viewer's bit from every 2-s segment of the
// copy. Each segment carries one bit, so shorter segments put more bits in a minute of a leak.
const T = 300_000;
// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;
const bins = mediaBinaries();
let dir: string;
let dataDir: string;
let server: ServeProcess;
let filmId: string;
let ingested: Json;
let org: { organizationId: string; apiKey: string };
const file = (name: string) => path.join(dir, name);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-short-segments-'));
  dataDir = file('data');
  makePanFilm(file('film.mp4'), 8);
  await drm(['migrate', '--data-dir', dataDir]);
  const args = ['ingest', file('film.mp4'), '--title', 'Short cuts', '--type', 'video', '--watermark'];
  ingested = JSON.parse(await drm([...args, '--segment-seconds', '2', '--data-dir', dataDir, '--json'])) as Json;
  filmId = ingested.contentId as string;
  server = await startServe({ dataDir });
  org = await registerOver(server.url, 'Short Cuts Inc');
  const license = ['admin', 'license', '--org', org.organizationId, '--content', filmId, '--type', 'video'];
  await drm([...license, '--watermark', '--data-dir', dataDir]);
}, T);
afterAll(() => {
  killAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('content cut in 2-s segments', () => {
  it(
    'is ingested as four 2-s segments, and the catalog records the length',
    async () => {
      expect(ingested).toMatchObject({ segmentSeconds: 2, segmentCount: 4, isWatermarked: true });
      const shown = JSON.parse(await drm(['content', 'show', filmId, '--data-dir', dataDir, '--json'])) as Json;
      expect(shown).toMatchObject({ segmentSeconds: 2, segmentCount: 4, segmentRule: 'keyed' });
    },
    T,
  );

  it(
    "is served with a 2-s target duration, and drm analyze reads the viewer's bit from each segment of the copy",
    async () => {
      const res = await fetch(`${server.url}/api/v1/stream/${filmId}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ viewerId: 'short-viewer' }),
      });
      expect(res.status).toBe(201);
      const session = (await res.json()) as { playlistUrl: string; binaryId: string };
      const playlist = await (await fetch(`${server.url}${session.playlistUrl}`)).text();
      expect(playlist).toContain('#EXT-X-TARGETDURATION:2\n');
      const durations = [...playlist.matchAll(/^#EXTINF:([\d.]+),$/gm)].map((m) => Number(m[1]));
      expect(durations).toHaveLength(4);
      for (const d of durations) expect(d).toBeCloseTo(2, 1);

      execFileSync(bins.ffmpeg, [
        '-v',
        'error',
        '-y',
        '-i',
        `${server.url}${session.playlistUrl}`,
        '-c',
        'copy',
        file('copy.mp4'),
      ]);
      const r = await runDrm(
        ['analyze', file('copy.mp4'), '--content', filmId, '--data-dir', dataDir, '--json'],
        {},
        T,
      );
      expect([0, 2], r.stderr).toContain(r.code);
      const analysis = (JSON.parse(r.stdout) as Json).analysis as Json;
      expect(analysis.segmentSeconds).toBe(2);
      const rule = keyedRule(segmentRuleKey(loadServerSecret(dataDir)), filmId);
      const served = [0, 1, 2, 3].map((s) => String(servedBit(rule, session.binaryId, s)));
      // each segment read as the variant the viewer was served there (A reads as bit 0, B as 1)
      expect(analysis.segments.map((s: Json) => s.index)).toEqual([0, 1, 2, 3]);
      expect(analysis.segments.map((s: Json) => s.bit)).toEqual(served);
      for (const s of analysis.segments) expect(s.coverage).toBeCloseTo(2, 0);
    },
    T,
  );

  it(
    'refuses any other length in one line, before any work',
    async () => {
      const r = await runDrm([
        'ingest',
        file('film.mp4'),
        '--title',
        'x',
        '--type',
        'video',
        '--segment-seconds',
        '5',
        '--data-dir',
        dataDir,
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/--segment-seconds.*5.*2, 4, 6, 10/)]);
    },
    T,
  );
});
