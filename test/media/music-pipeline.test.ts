import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { musicGraph } from '../helpers/media.js';
import { DrmError } from '../../src/errors.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { readMonoPcm } from '../../src/media/audio-pcm.js';
import { probeMedia } from '../../src/media/probe.js';
import { watermarkKey } from '../../src/watermark/keyed-random.js';
import { detectMusic } from '../../src/watermark/music/detect.js';
import { embedMusic } from '../../src/watermark/music/embed.js';
import { musicSegmentVariants } from '../../src/watermark/music/segment.js';
import type { Detection } from '../../src/watermark/segments.js';
import { FIXED_RULE, withSegmentSeconds } from '../../src/watermark/segment-rule.js';

// Real ffmpeg end to end, on music synthesised here with lavfi: no fixture files.
const bins = mediaBinaries();
const key = watermarkKey(Buffer.alloc(32, 7));
const contentId = '3f6c2a9e-5d1b-4c8e-9a7f-2b4d6e8f0a1c';
const bits = '0110100111001011010011100101101001110010';
const SECONDS = 35;
let dir: string;
const file = (name: string) => path.join(dir, name);
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
let embedded: Awaited<ReturnType<typeof embedMusic>>;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-music-'));
  ff('-filter_complex', musicGraph(0, SECONDS), '-c:a', 'pcm_s16le', file('music.wav'));
  ff('-filter_complex', musicGraph(1, SECONDS), '-c:a', 'pcm_s16le', file('other.wav'));
  ff(
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=64x48:rate=10:duration=2',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    file('silent.mp4'),
  );
  fs.writeFileSync(file('notes.txt'), 'not music\n'.repeat(100));
  embedded = await embedMusic({
    rule: FIXED_RULE,
    bins,
    key,
    contentId,
    input: file('music.wav'),
    output: file('marked.m4a'),
    bits,
  });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const detect = (leak: string) =>
  detectMusic({ rule: FIXED_RULE, bins, key, contentId, leak: file(leak), original: file('music.wav') });

/** Every scored segment reads the bit the viewer's id puts there. */
function expectBits(d: Detection, minAbsZ: number): void {
  expect(d.segments.length).toBeGreaterThan(0);
  for (const s of d.segments) {
    expect({ index: s.index, bit: s.bit }).toEqual({ index: s.index, bit: bits[s.index % 40] });
    expect(Math.abs(s.z)).toBeGreaterThanOrEqual(minAbsZ);
  }
}

async function failure(p: Promise<unknown>): Promise<DrmError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DrmError);
  expect((err as DrmError).code).toBe('BAD_REQUEST');
  return err as DrmError;
}

describe('music A/B pipeline', { timeout: 120_000 }, () => {
  it('embeds one variant per 10-s segment into an AAC .m4a of the same length, at least 30 dB below the music', async () => {
    expect(embedded.segments).toBe(4);
    expect(embedded.sampleRate).toBe(44_100);
    expect(embedded.snrDb).toBeGreaterThanOrEqual(30);
    const info = await probeMedia(bins, file('marked.m4a'));
    expect(info.audio).toMatchObject({ codec: 'aac', sampleRate: 44_100, channels: 2 });
    expect(info.duration).toBeCloseTo(SECONDS, 1);
  });

  it('reads the bits back from the marked file itself', async () => {
    const d = await detect('marked.m4a');
    expect(d.segments.map((s) => s.index)).toEqual([0, 1, 2, 3]);
    expectBits(d, 5);
    expect(d.bits.slice(0, 4)).toBe(bits.slice(0, 4));
    expect(d.bits.slice(4)).toBe('?'.repeat(36));
    expect(d.alignment.offsetSeconds).toBe(0);
  });

  it('marks and reads 2-s segments when the content was cut in them, after MP3 128 kb/s and a trim 3.3 s in', async () => {
    const rule = withSegmentSeconds(FIXED_RULE, 2);
    const short = await embedMusic({
      rule,
      bins,
      key,
      contentId,
      input: file('music.wav'),
      output: file('short.m4a'),
      bits,
    });
    expect(short.segments).toBe(18);
    ff('-ss', '3.3', '-i', file('short.m4a'), '-t', '20', '-c:a', 'libmp3lame', '-b:a', '128k', file('short.mp3'));
    const d = await detectMusic({ rule, bins, key, contentId, leak: file('short.mp3'), original: file('music.wav') });
    // 3.3–23.3 s of the original: segment 1 partly (0.7 s, too little to score), 2–10 whole, 11 for 1.3 s
    expect(d.segments.map((s) => s.index)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const whole = d.segments.filter((s) => s.index <= 10);
    expect(whole.map((s) => s.bit).join('')).toBe(bits.slice(2, 11));
    for (const s of whole) expect(Math.abs(s.z)).toBeGreaterThanOrEqual(4);
  });

  it('reads them after MP3 128 kb/s and a trim that starts 7.3 s in', async () => {
    ff('-ss', '7.3', '-i', file('marked.m4a'), '-c:a', 'libmp3lame', '-b:a', '128k', file('trimmed.mp3'));
    const d = await detect('trimmed.mp3');
    expect(d.alignment.offsetSeconds).toBeCloseTo(7.3, 2);
    expect(d.segments.map((s) => s.index)).toEqual([0, 1, 2, 3]);
    expect(d.segments[0]?.coverage).toBeCloseTo(2.7, 1);
    // Measured: z about +10 on the 2.7 s left of segment 0, ±21 on full segments.
    expectBits(d, 5);
  });

  it('reads them after resampling to 22.05 kHz and a mono downmix', async () => {
    ff('-i', file('marked.m4a'), '-ar', '22050', '-ac', '1', '-c:a', 'aac', '-b:a', '96k', file('mono22.m4a'));
    expectBits(await detect('mono22.m4a'), 5);
  });

  it('reads them played 8% fast with the pitch raised, and 7% slow with the pitch kept, and says which', async () => {
    ff(
      '-i',
      file('marked.m4a'),
      '-af',
      'asetrate=44100*1.08,aresample=44100',
      '-c:a',
      'aac',
      '-b:a',
      '128k',
      file('sped-up.m4a'),
    );
    const fast = await detect('sped-up.m4a');
    expect(fast.alignment).toMatchObject({ speed: 1.08, pitchKept: false });
    expectBits(fast, 5);
    ff('-i', file('marked.m4a'), '-af', 'atempo=0.93', '-c:a', 'aac', '-b:a', '128k', file('slowed.m4a'));
    const slow = await detect('slowed.m4a');
    expect(slow.alignment.speed).toBeCloseTo(0.93, 3);
    expect(slow.alignment.pitchKept).toBe(true);
    expectBits(slow, 5);
  });

  it('reads a copy whose 10-s parts were put in reverse order, each part placed on its own', async () => {
    const part = (from: number, label: string) => `[0:a]atrim=${from}:${from + 10},asetpts=PTS-STARTPTS[${label}]`;
    const graph = `${part(20, 'c')};${part(10, 'b')};${part(0, 'a')};[c][b][a]concat=n=3:v=0:a=1[o]`;
    ff(
      '-i',
      file('marked.m4a'),
      '-filter_complex',
      graph,
      '-map',
      '[o]',
      '-c:a',
      'aac',
      '-b:a',
      '128k',
      file('reversed.m4a'),
    );
    const d = await detect('reversed.m4a');
    expect(d.segments.map((s) => s.index)).toEqual([0, 1, 2]);
    expect(d.alignment.piecesMoved).toBeGreaterThan(0);
    expectBits(d, 5);
  });

  it('finds no mark in the unmarked original re-encoded', async () => {
    ff('-i', file('music.wav'), '-c:a', 'aac', '-b:a', '256k', file('unmarked.m4a'));
    const d = await detect('unmarked.m4a');
    expect(d.segments).toHaveLength(4);
    for (const s of d.segments) expect(Math.abs(s.z)).toBeLessThan(4);
    expect(d.bits).toBe('?'.repeat(40));
  });

  it('refuses what it cannot work on with a clear BAD_REQUEST and leaves no file', async () => {
    const embed = (input: string, b = bits) =>
      embedMusic({ rule: FIXED_RULE, bins, key, contentId, input: file(input), output: file('out.m4a'), bits: b });
    expect((await failure(embed('notes.txt'))).message).toMatch(/notes\.txt is not a media file/);
    expect((await failure(embed('silent.mp4'))).message).toMatch(/silent\.mp4 has no audio stream/);
    expect((await failure(embed('music.wav', '0110'))).message).toMatch(/bits must be exactly 40/);
    expect(fs.existsSync(file('out.m4a'))).toBe(false);
    expect((await failure(detect('silent.mp4'))).message).toMatch(/leak silent\.mp4 has no audio stream/);
    expect((await failure(detect('other.wav'))).message).toMatch(/leak does not match the original/);
  });

  it('stops ffmpeg and removes the partial output when aborted', async () => {
    const controller = new AbortController();
    const run = embedMusic({
      rule: FIXED_RULE,
      bins,
      key,
      contentId,
      input: file('music.wav'),
      output: file('aborted.m4a'),
      bits,
      signal: controller.signal,
      onProgress: (done) => done >= 10 && controller.abort(),
    });
    await expect(run).rejects.toThrow(/abort/i);
    expect(fs.existsSync(file('aborted.m4a'))).toBe(false);
  });

  it('makes both variants of a segment from one δ on every channel, so a mono mix keeps it', async () => {
    const left = (await readMonoPcm(bins, file('music.wav'), { sampleRate: 44_100, duration: 10 })).slice();
    const right = left.map((v, i) => 0.5 * v + 0.01 * Math.sin(i / 7));
    const { a, b } = musicSegmentVariants([left, right], 44_100, key, contentId, 0);
    const deltaL = (a[0] as Float32Array).map((v, i) => v - (left[i] as number));
    const deltaR = (a[1] as Float32Array).map((v, i) => v - (right[i] as number));
    for (let i = 0; i < left.length; i += 997) {
      expect(deltaR[i]).toBeCloseTo(deltaL[i] as number, 6);
      expect((b[0] as Float32Array)[i]).toBeCloseTo((left[i] as number) - (deltaL[i] as number), 6);
    }
    expect(deltaL.some((v) => Math.abs(v) > 1e-4)).toBe(true);
  });
});
