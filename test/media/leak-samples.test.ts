import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaBinaries } from '../../src/media/binaries.js';
import { probeMedia } from '../../src/media/probe.js';
import { type LeakSamples, sampleLeak } from '../../src/watermark/video/leak-samples.js';

// A 64-s film (long enough to be decoded in two parts) made here with ffmpeg's test source.
const bins = mediaBinaries();
let dir: string;
let film: string;
let duration: number;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-leak-samples-'));
  film = path.join(dir, 'film.mp4');
  execFileSync(bins.ffmpeg, [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=160x120:rate=25:duration=64',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-bf',
    '3',
    '-pix_fmt',
    'yuv420p',
    film,
  ]);
  duration = (await probeMedia(bins, film)).duration;
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const sample = (parts: number, o: { spacing: number; skipNonReference: boolean }) => {
  const out = path.join(dir, `${parts}-${o.spacing}-${o.skipNonReference}`);
  fs.mkdirSync(out, { recursive: true });
  return sampleLeak(bins, film, {
    duration,
    parts,
    fps: 25,
    thumb: { width: 32, height: 24 },
    proxy: { width: 80, height: 60 },
    dir: out,
    ...o,
  });
};

async function proxies(s: LeakSamples, samples: number[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for await (const f of s.proxies(samples, { width: 80, height: 60 })) out.push(f);
  return out;
}

describe('sampling a leak in parts decoded at once', () => {
  it('gives the same frames at the same times as one decode, none lost or twice at the boundary', async () => {
    const every = { spacing: 0.5 / 25, skipNonReference: false };
    const [one, two] = await Promise.all([sample(1, every), sample(2, every)]);
    expect(one.thumbs).toHaveLength(1600);
    expect(two.thumbs).toHaveLength(1600);
    expect([...two.times].map((t) => Math.round(t * 25))).toEqual([...one.times].map((t) => Math.round(t * 25)));
    for (const k of [0, 799, 800, 801, 1599]) expect(two.thumbs[k]).toEqual(one.thumbs[k]);
  });

  it('finds each sample’s proxy in its part, by seeking and in a run across the boundary', async () => {
    const s = await sample(2, { spacing: 3.5 / 25, skipNonReference: true });
    const mid = s.times.findIndex((t) => t >= 32);
    const picks = [0, mid - 1, mid, s.thumbs.length - 1];
    const run = await proxies(s, picks);
    expect(run).toHaveLength(4);
    for (const [n, k] of picks.entries()) {
      const seeked = (await s.proxyAt(k, { width: 80, height: 60, fps: 25 })) as Uint8Array;
      // The same picture: 8-bit by seeking, with the fraction kept in the run.
      const gap =
        seeked.reduce((sum, v, i) => sum + Math.abs(v - ((run[n] as Float32Array)[i] as number)), 0) / seeked.length;
      expect(gap).toBeLessThan(1);
    }
    // Neighbouring samples are different pictures (testsrc2 moves), so the test above can fail.
    const [a, b] = await proxies(s, [mid - 1, mid]);
    const apart =
      (a as Float32Array).reduce((sum, v, i) => sum + Math.abs(v - ((b as Float32Array)[i] as number)), 0) /
      (a as Float32Array).length;
    expect(apart).toBeGreaterThan(1);
  });
});
