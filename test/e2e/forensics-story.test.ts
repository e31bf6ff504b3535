import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaBinaries } from '../../src/media/binaries.js';
import { registerOver } from '../helpers/fixtures.js';
import { makePanFilm, musicGraph } from '../helpers/media.js';
import { drm, killAll, type ServeProcess, startServe } from '../helpers/serve-process.js';

// The whole story, every part real: an organization registers and is licensed, the content team
// ingests a watermarked film and a watermarked track with `drm ingest`, `drm serve` (behind a
// trusted proxy) hands three viewers their sessions from three addresses, ffmpeg plays each
// one's stream, one viewer's copy leaks re-encoded and cut, and the investigator uploads it.
// Three segments among three viewers cannot name anyone honestly: the analysis lists the viewers
// who fit, the leaker among them, and names nobody. The track's only listener is named from the
// same three segments, with session, address, wallet, key and organization: nobody else could
// stand in their place. An unmarked copy or a different film names nobody.
const T = 600_000;
const bins = mediaBinaries();
let dir: string;
let dataDir: string;
let server: ServeProcess;
let org: { organizationId: string; apiKey: string };
const file = (name: string) => path.join(dir, name);
// Asynchronous on purpose: a client that blocks its event loop for seconds finds its pooled
// keep-alive connection closed by the server only when it writes the next upload into it.
const run = promisify(execFile);
const ff = (...args: string[]) => run(bins.ffmpeg, ['-v', 'error', '-y', ...args]);

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

interface Viewer {
  name: string;
  ip: string;
  session: Json;
  copy: string;
}

async function ingest(input: string, title: string, type: 'video' | 'music'): Promise<string> {
  const out = JSON.parse(
    await drm(['ingest', input, '--title', title, '--type', type, '--watermark', '--data-dir', dataDir, '--json']),
  ) as Json;
  await drm([
    'admin',
    'license',
    '--org',
    org.organizationId,
    '--content',
    out.contentId,
    '--type',
    type,
    '--watermark',
    '--data-dir',
    dataDir,
  ]);
  return out.contentId as string;
}

/** A viewer starts a session from its own address (the proxy's X-Forwarded-For) and ffmpeg plays the whole stream. */
async function watch(contentId: string, name: string, ip: string, ext: string): Promise<Viewer> {
  const res = await fetch(`${server.url}/api/v1/stream/${contentId}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${org.apiKey}`,
      'content-type': 'application/json',
      'x-forwarded-for': ip,
      'user-agent': `${name}'s player`,
    },
    body: JSON.stringify({ viewerId: name }),
  });
  expect(res.status).toBe(201);
  const session = (await res.json()) as Json;
  const copy = file(`${contentId.slice(0, 8)}-${name}.${ext}`);
  await ff('-i', `${server.url}${session.playlistUrl}`, '-c', 'copy', copy);
  return { name, ip, session, copy };
}

/** The viewer whose bits on `segments` differ from every other viewer's (so a leak of those segments can tell). */
function toldApart(viewers: Viewer[], segments: number[]): Viewer | undefined {
  const bits = (v: Viewer) => segments.map((s) => (v.session.binaryId as string)[s]).join('');
  return viewers.find((v) => viewers.every((w) => w === v || bits(w) !== bits(v)));
}

async function analyze(contentId: string, contentType: string, leak: string): Promise<Json> {
  const form = new FormData();
  form.set('contentId', contentId);
  form.set('contentType', contentType);
  form.set('file', new File([await fs.openAsBlob(leak)], path.basename(leak)));
  const res = await fetch(`${server.url}/api/v1/forensics/analyze`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.apiKey}` },
    body: form,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Json;
}

function expectNamed(body: Json, leaker: Viewer, contentId: string) {
  expect(body).toMatchObject({
    status: 'completed',
    classification: 'strong_match',
    binaryId: leaker.session.binaryId,
  });
  expect(body.matchedSession).toMatchObject({
    sessionId: leaker.session.sessionId,
    viewerId: leaker.session.viewerId,
    ipAddress: leaker.ip,
    walletAddress: leaker.session.walletAddress,
    apiKey: org.apiKey.slice(0, 12),
  });
  expect(body.evidenceChain).toMatchObject({
    apiKey: { prefix: org.apiKey.slice(0, 12) },
    organization: { id: org.organizationId, name: 'Story Films' },
    wallet: { address: leaker.session.walletAddress, hasOwnWallet: false },
    session: { id: leaker.session.sessionId, binaryId: leaker.session.binaryId },
    viewer: { viewerId: leaker.session.viewerId, ipAddress: leaker.ip, userAgent: `${leaker.name}'s player` },
    content: { contentId },
  });
}

function expectNobody(body: Json) {
  expect(body).toMatchObject({
    status: 'completed',
    classification: 'no_match',
    matchedSession: null,
    evidenceChain: null,
  });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-story-'));
  dataDir = file('data');
  makePanFilm(file('film.mp4'), 27);
  await ff(
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=640x360:rate=25',
    '-t',
    '20',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-pix_fmt',
    'yuv420p',
    file('other-film.mp4'),
  );
  await ff('-filter_complex', musicGraph(0, 27), '-c:a', 'aac', '-b:a', '192k', file('track.m4a'));
  server = await startServe({ dataDir, args: ['--trust-proxy'] });
  org = await registerOver(server.url, 'Story Films');
}, T);
afterAll(() => {
  killAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a leaked film among three viewers', () => {
  let filmId: string;
  const viewers: Viewer[] = [];

  beforeAll(async () => {
    filmId = await ingest(file('film.mp4'), 'The Pan', 'video');
    const addresses = ['203.0.113.10', '198.51.100.23', '192.0.2.77', '203.0.113.99', '198.51.100.7'];
    // The leak (from 7 s on) holds segment 0 for 3 s and segments 1 and 2 whole: three viewers,
    // and more only if none of them is told apart by those two segments.
    for (const [i, ip] of addresses.entries()) {
      if (i >= 3 && toldApart(viewers, [1, 2])) break;
      viewers.push(await watch(filmId, ['alice', 'bob', 'carol', 'dave', 'erin'][i] as string, ip, 'ts'));
    }
  }, T);

  it(
    'lists the viewers who fit a 720p CRF 28 copy cut by 7 s, the leaker among them, and names none of them (weak_match)',
    async () => {
      const leaker = toldApart(viewers, [1, 2]);
      expect(leaker, 'no viewer is told apart by segments 1 and 2').toBeDefined();
      const leak = file('leak.mp4');
      await ff(
        '-i',
        (leaker as Viewer).copy,
        '-ss',
        '7',
        '-vf',
        'scale=1280:720',
        '-c:v',
        'libx264',
        '-crf',
        '28',
        '-preset',
        'fast',
        '-c:a',
        'aac',
        leak,
      );
      const body = await analyze(filmId, 'video', leak);
      expect(body).toMatchObject({
        status: 'completed',
        classification: 'weak_match',
        matchedSession: null,
        evidenceChain: null,
      });
      expect(body.analysis.candidates).toBe(viewers.length);
      expect(body.markProbability).toBeLessThan(1e-9);
      expect(body.identificationProbability).toBeGreaterThan(1e-6);
      expect(body.analysis.candidateSet.map((c: Json) => c.viewerId)).toContain((leaker as Viewer).session.viewerId);
      for (const v of viewers) expect(JSON.stringify(body.evidenceChain ?? {})).not.toContain(v.ip);
    },
    T,
  );

  it(
    'names nobody in an unmarked copy of the same film',
    async () => {
      await ff(
        '-i',
        file('film.mp4'),
        '-ss',
        '7',
        '-vf',
        'scale=1280:720',
        '-c:v',
        'libx264',
        '-crf',
        '28',
        '-preset',
        'fast',
        file('unmarked.mp4'),
      );
      expectNobody(await analyze(filmId, 'video', file('unmarked.mp4')));
    },
    T,
  );

  it(
    'names nobody in a different film',
    async () => {
      expectNobody(await analyze(filmId, 'video', file('other-film.mp4')));
    },
    T,
  );
});

describe('a leaked track traced to its listener', () => {
  let trackId: string;
  const listeners: Viewer[] = [];

  beforeAll(async () => {
    trackId = await ingest(file('track.m4a'), 'The Hum', 'music');
    listeners.push(await watch(trackId, 'lena', '203.0.113.41', 'ts'));
  }, T);

  it(
    'names the only listener from an MP3 copy cut by 7 s, with the whole evidence chain (strong_match)',
    async () => {
      const [leaker] = listeners as [Viewer];
      const leak = file('leak.mp3');
      await ff('-i', leaker.copy, '-ss', '7', '-c:a', 'libmp3lame', '-b:a', '128k', leak);
      const body = await analyze(trackId, 'music', leak);
      expectNamed(body, leaker, trackId);
      expect(body).toMatchObject({ markProbability: expect.any(Number), identificationProbability: 0 });
      expect(body.markProbability).toBeLessThan(1e-9);
    },
    T,
  );

  it(
    'names nobody in an unmarked copy of the track',
    async () => {
      await ff('-i', file('track.m4a'), '-ss', '7', '-c:a', 'libmp3lame', '-b:a', '128k', file('unmarked.mp3'));
      expectNobody(await analyze(trackId, 'music', file('unmarked.mp3')));
    },
    T,
  );
});
