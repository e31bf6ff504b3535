import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import type { ContentRow } from '../../src/db/repos/index.js';
import { DrmError } from '../../src/errors.js';
import { type IngestResult, ingestContent } from '../../src/domain/ingest/ingest.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { readPlaylist } from '../../src/media/hls.js';
import { probeMedia } from '../../src/media/probe.js';
import { MUSIC_REFERENCE } from '../../src/watermark/music/reference.js';
import { thumbsBeside, VIDEO_REFERENCE } from '../../src/watermark/video/reference.js';
import { makeTestApp, type TestApp } from '../helpers/context.js';
import { contentRowsIn, decryptedSegment } from '../helpers/fixtures.js';

// drm ingest's core on real ffmpeg: 25 s of a moving picture with sound, and 25 s of music,
// made here with lavfi. Each case checks what lands on disk and in the catalog.
const bins = mediaBinaries();
const backend = createCpuPoolBackend();
let t: TestApp;
let dir: string;
const file = (name: string) => path.join(dir, name);
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);

beforeAll(async () => {
  t = await makeTestApp('sqlite');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-ingest-'));
  ff('-f', 'lavfi', '-i', 'mandelbrot=size=640x360:start_scale=1.2:end_scale=1.2', '-frames:v', '1', file('still.png'));
  ff(
    '-loop',
    '1',
    '-framerate',
    '25',
    '-i',
    file('still.png'),
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=44100',
    '-vf',
    "crop=320:180:x='20+t*8':y='30+t*3'",
    '-t',
    '25',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    file('film.mp4'),
  );
  ff(
    '-f',
    'lavfi',
    '-i',
    'aevalsrc=0.3*sin(2*PI*330*t)*sin(2*PI*0.5*t)+0.2*sin(2*PI*1250*t):s=44100:d=25',
    '-ac',
    '2',
    '-c:a',
    'aac',
    file('track.m4a'),
  );
  fs.writeFileSync(file('notes.txt'), 'not a film\n'.repeat(100));
}, 60_000);
afterAll(async () => {
  await backend.close();
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const contentRoot = () => path.join(t.dir, 'content');
/** Every file under the content store, relative to it (the empty staging directory aside). */
const storedFiles = () =>
  (fs.existsSync(contentRoot()) ? (fs.readdirSync(contentRoot(), { recursive: true }) as string[]) : [])
    .filter((f) => f !== '.staging')
    .sort();

const contentRows = () => contentRowsIn(path.join(t.dir, 'drm.db'));

async function row(id: string): Promise<ContentRow> {
  const r = await t.ctx.repos.content.find(id);
  if (!r) throw new Error(`no row for ${id}`);
  return r;
}

/**
 * The stages in the order they run, wall times that add up to no more than the ingest took, and
 * (Linux) packaging's CPU split into at least these parts, no more of it than its cores allow.
 */
function expectStagesOf(r: IngestResult, parts: string[]): void {
  // a video's stills are outputs of the packaging decode, music's thumbnail a stage of its own
  const names = ['probe', 'source-check', 'sweep', 'package', 'discontinuities'];
  const stills = r.type === 'music' ? ['thumbnail'] : [];
  expect(r.stages.map((s) => s.stage)).toEqual([...names, ...stills, 'store', 'database']);
  // `seconds` counts from packaging on
  const fromPackaging = r.stages.slice(names.indexOf('package')).reduce((sum, s) => sum + s.seconds, 0);
  expect(fromPackaging).toBeLessThanOrEqual(r.seconds + 0.01);
  if (process.platform !== 'linux') return;
  const pack = r.stages.find((s) => s.stage === 'package');
  const cpu = new Map((pack?.parts ?? []).map((p) => [p.part, p.cpuSeconds]));
  for (const part of parts) expect(cpu.get(part), part).toBeGreaterThan(0);
  const total = [...cpu.values()].reduce((sum, x) => sum + x, 0);
  expect(total).toBeLessThan((pack?.seconds ?? 0) * os.availableParallelism() + 0.2);
}

const decryptSegment = (r: ContentRow, variant: string, n: number) => decryptedSegment(t.ctx, r, variant as 'a', n);

describe('drm ingest: video', () => {
  it('packages a plain video as AES-128 HLS in 10-s segments, with a thumbnail, a preview and a ready catalog row', async () => {
    const stages = new Set<string>();
    const r = await ingestContent(
      t.ctx,
      { input: file('film.mp4'), title: ' Pan ', type: 'video', watermark: false },
      { onProgress: (s) => stages.add(s) },
    );
    expect(r).toMatchObject({
      title: 'Pan',
      type: 'video',
      resolution: '180p',
      isWatermarked: false,
      segmentCount: 3,
      backend: null,
    });
    expect(r.duration).toBeCloseTo(25, 0);
    expect(stages.has('packaging')).toBe(true);
    expectStagesOf(r, ['transcode']);

    const stored = await row(r.contentId);
    expect(stored).toMatchObject({
      status: 'ready',
      segmentCount: 3,
      isWatermarked: false,
      resolution: '180p',
      title: 'Pan',
    });
    const root = t.ctx.storage.dirOf(stored.storagePath as string);
    expect(readPlaylist(path.join(root, 'plain', 'index.m3u8')).map((s) => Math.round(s.duration))).toEqual([
      10, 10, 5,
    ]);
    for (const f of ['thumbnail.jpg', 'preview.mp4'])
      expect(fs.statSync(path.join(root, f)).size).toBeGreaterThan(1000);
    // Neither the key nor ffmpeg's key info is left beside the segments.
    expect(fs.readdirSync(root, { recursive: true }).filter((f) => String(f).includes('key'))).toEqual([]);

    // Every 188-byte TS packet starts with the sync byte 0x47; encrypted, the first ten do not
    // (any one may, by chance: one time in 256 each).
    const syncs = (b: Buffer) => Array.from({ length: 10 }, (_, k) => b[k * 188]).filter((v) => v === 0x47).length;
    const raw = fs.readFileSync(t.ctx.storage.segmentFile(stored.storagePath as string, 'plain', 0));
    expect(syncs(raw)).toBeLessThan(4);
    const clear = decryptSegment(stored, 'plain', 1);
    expect(syncs(clear)).toBe(10);
    fs.writeFileSync(file('seg1.ts'), clear);
    const info = await probeMedia(bins, file('seg1.ts'));
    expect(info.video?.codec).toBe('h264');
    expect(info.audio?.codec).toBe('aac');
  }, 60_000);

  it('makes variants A and B cut alike, and says which backend marked them and where the time went', async () => {
    let marked = { done: 0, total: 0 };
    const onProgress = (stage: string, done: number, total: number) => {
      if (stage === 'marking A and B') marked = { done, total };
    };
    const r = await ingestContent(
      t.ctx,
      { input: file('film.mp4'), title: 'Pan (marked)', type: 'video', watermark: true },
      { backend: async () => backend, onProgress },
    );
    // the marker counts frames, the progress says seconds of media, as the other stages do
    expect(Math.abs(marked.total - r.duration)).toBeLessThan(0.5);
    expect(marked.done).toBeCloseTo(marked.total, 1);
    expect(r).toMatchObject({ isWatermarked: true, segmentCount: 3, backend: backend.name });
    expectStagesOf(r, ['decode', 'encode-a-and-b', 'mark-forward-dtcwt', 'mark-write-variants', 'main-thread']);
    const stored = await row(r.contentId);
    const root = t.ctx.storage.dirOf(stored.storagePath as string);
    const a = readPlaylist(path.join(root, 'a', 'index.m3u8'));
    const b = readPlaylist(path.join(root, 'b', 'index.m3u8'));
    expect(a.map((s) => s.duration)).toEqual(b.map((s) => s.duration));
    expect(fs.existsSync(path.join(root, 'plain'))).toBe(false);
    // The detection reference: the unmarked luma reduced by the mark's scale, every frame of the film.
    const reference = await probeMedia(bins, path.join(root, VIDEO_REFERENCE));
    expect(reference.video).toMatchObject({ width: 320 / 4, height: 180 / 4 });
    expect(reference.audio).toBeUndefined();
    expect(Math.abs(reference.duration - r.duration)).toBeLessThan(0.2);
    // Its thumbnails for time alignment, from the same decode, so analysis need not decode the reference for them.
    const thumbs = await probeMedia(bins, thumbsBeside(path.join(root, VIDEO_REFERENCE)));
    expect(thumbs.video).toMatchObject({ width: 96, height: 54 });
    expect(Math.abs(thumbs.duration - reference.duration)).toBeLessThan(0.05);
    // The catalog's stills, from the same decode: ten seconds with sound, and a still picture.
    const preview = await probeMedia(bins, path.join(root, 'preview.mp4'));
    expect(preview.duration).toBeCloseTo(10, 0);
    expect(preview).toMatchObject({ video: { width: 320, height: 180 }, audio: { codec: 'aac' } });
    expect((await probeMedia(bins, path.join(root, 'thumbnail.jpg'))).video).toMatchObject({ width: 320, height: 180 });
    for (let n = 0; n < 3; n++) {
      const [sa, sb] = [decryptSegment(stored, 'a', n), decryptSegment(stored, 'b', n)];
      expect(sa[0]).toBe(0x47);
      expect(sb[0]).toBe(0x47);
      expect(sa.equals(sb)).toBe(false);
    }
  }, 120_000);
});

describe('drm ingest: music', () => {
  it('packages music as audio-only AES-128 HLS with a waveform thumbnail and no preview', async () => {
    const r = await ingestContent(t.ctx, { input: file('track.m4a'), title: 'Track', type: 'music', watermark: false });
    expect(r).toMatchObject({ type: 'music', resolution: null, segmentCount: 3 });
    const stored = await row(r.contentId);
    const root = t.ctx.storage.dirOf(stored.storagePath as string);
    expect(fs.existsSync(path.join(root, 'thumbnail.jpg'))).toBe(true);
    expect(fs.existsSync(path.join(root, 'preview.mp4'))).toBe(false);
    fs.writeFileSync(file('music0.ts'), decryptSegment(stored, 'plain', 0));
    const info = await probeMedia(bins, file('music0.ts'));
    expect(info.video).toBeUndefined();
    expect(info.audio?.codec).toBe('aac');
  }, 60_000);

  it('makes variants A and B of watermarked music, cut alike', async () => {
    const r = await ingestContent(t.ctx, {
      input: file('track.m4a'),
      title: 'Track (marked)',
      type: 'music',
      watermark: true,
    });
    const stored = await row(r.contentId);
    const root = t.ctx.storage.dirOf(stored.storagePath as string);
    const a = readPlaylist(path.join(root, 'a', 'index.m3u8'));
    expect(a.map((s) => s.duration)).toEqual(readPlaylist(path.join(root, 'b', 'index.m3u8')).map((s) => s.duration));
    expect(decryptSegment(stored, 'a', 0).equals(decryptSegment(stored, 'b', 0))).toBe(false);
    const reference = await probeMedia(bins, path.join(root, MUSIC_REFERENCE));
    expect(reference.audio).toMatchObject({ codec: 'flac', channels: 1, sampleRate: 44100 });
  }, 60_000);
});

describe('drm ingest: bad input and failures leave nothing behind', () => {
  const expectRefused = async (req: Parameters<typeof ingestContent>[1], message: RegExp) => {
    const before = storedFiles();
    const err = await ingestContent(t.ctx, req, { backend: async () => backend }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DrmError);
    expect((err as DrmError).code).toBe('BAD_REQUEST');
    expect((err as DrmError).message).toMatch(message);
    expect(storedFiles()).toEqual(before);
  };

  it('refuses a file that is not media', () =>
    expectRefused({ input: file('notes.txt'), title: 'x', type: 'video', watermark: false }, /not a media file/));
  it('refuses music ingested as video', () =>
    expectRefused({ input: file('track.m4a'), title: 'x', type: 'video', watermark: true }, /no video stream/));
  it('refuses a missing file', () =>
    expectRefused({ input: file('nope.mp4'), title: 'x', type: 'video', watermark: false }, /does not exist/));
  it('refuses an empty title', () =>
    expectRefused({ input: file('film.mp4'), title: '  ', type: 'video', watermark: false }, /title/));
  it('refuses an unknown type', () =>
    expectRefused(
      { input: file('film.mp4'), title: 'x', type: 'film' as 'video', watermark: false },
      /video or music/,
    ));

  it('cancelled half-way, removes its staging directory and publishes no row', async () => {
    const before = storedFiles();
    const rowsBefore = await contentRows();
    const controller = new AbortController();
    const err = await ingestContent(
      t.ctx,
      { input: file('film.mp4'), title: 'Cancelled', type: 'video', watermark: true },
      {
        backend: async () => backend,
        signal: controller.signal,
        onProgress: (_s, done) => done >= 2 && controller.abort(),
      },
    ).catch((e: unknown) => e);
    expect(controller.signal.aborted).toBe(true);
    expect(err).toBeDefined();
    expect(storedFiles()).toEqual(before);
    expect(await contentRows()).toBe(rowsBefore);
  }, 60_000);
});

describe('the content store after a crash', () => {
  it("sweeps a dead ingest's staging directory and an item moved into place without its catalog row", async () => {
    const root = contentRoot();
    const deadPid = 2 ** 22 + 12345; // above Linux's pid_max default: no such process
    const owner = JSON.stringify({ pid: deadPid, host: os.hostname() });
    fs.mkdirSync(path.join(root, '.staging', 'dead-staging'), { recursive: true });
    fs.writeFileSync(path.join(root, '.staging', 'dead-staging', 'owner.json'), owner);
    fs.mkdirSync(path.join(root, 'orphan', 'a'), { recursive: true });
    fs.writeFileSync(path.join(root, 'orphan', 'owner.json'), owner);
    fs.writeFileSync(path.join(root, 'orphan', '.publishing'), '');
    const alive = JSON.stringify({ pid: process.pid, host: os.hostname() });
    fs.mkdirSync(path.join(root, '.staging', 'running'), { recursive: true });
    fs.writeFileSync(path.join(root, '.staging', 'running', 'owner.json'), alive);

    const removed = await t.ctx.storage.sweep(async () => false);
    expect(removed.map((d) => path.basename(d)).sort()).toEqual(['dead-staging', 'orphan']);
    expect(fs.existsSync(path.join(root, '.staging', 'running'))).toBe(true);
    fs.rmSync(path.join(root, '.staging', 'running'), { recursive: true });
  });
});
