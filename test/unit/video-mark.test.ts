import { afterAll, describe, expect, it } from 'vitest';
import { createCpuDirectBackend } from '../../gpu/backend.js';
import { KeyedRandom, watermarkKey } from '../../src/watermark/keyed-random.js';
import { downsampleHalf, halfSize, upsampleDouble } from '../../src/watermark/resample.js';
import { analyse, applyDelta, DEFAULT_VIDEO_MARK, frameDelta, markedCount, segmentPattern } from '../../src/watermark/video-mark.js';
import { bitFromZ } from '../../src/watermark/score.js';
import { nullPatterns, SegmentScore } from '../../src/watermark/video-score.js';

const backend = createCpuDirectBackend();
afterAll(() => backend.close());
const key = watermarkKey(Buffer.from('k'.repeat(32)));
const content = '6b1f0c2e-2d0a-4f43-9f51-3a9d7c0e8b21';
const W = 320;
const H = 180;

/** A textured scene (blurred noise, mean 128) that drifts one pixel per frame, as a slow pan. */
function scene(frames: number, seed = 11): Uint8Array[] {
  const big = W + frames;
  const noise = new KeyedRandom(Uint32Array.from([seed, 2, 3, 4])).gaussians(big * H);
  const blurred = new Float32Array(noise.length);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < big; x++) {
      let s = 0;
      let n = 0;
      for (let dy = -2; dy <= 2; dy++) {
        for (let dx = -2; dx <= 2; dx++) {
          const yy = y + dy;
          const xx = x + dx;
          if (yy >= 0 && yy < H && xx >= 0 && xx < big) {
            s += noise[yy * big + xx] as number;
            n++;
          }
        }
      }
      blurred[y * big + x] = s / n;
    }
  }
  return Array.from({ length: frames }, (_, f) => {
    const out = new Uint8Array(W * H);
    for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) out[y * W + x] = Math.max(0, Math.min(255, Math.round(128 + 90 * (blurred[y * big + x + f] as number))));
    return out;
  });
}

/** A light attack: gaussian noise (σ = 2 grey levels) and 8-bit rounding, as a lossy encode adds. */
function attack(frame: Uint8Array, seed: number): Uint8Array {
  const g = new KeyedRandom(Uint32Array.from([seed, 9, 9, 9])).gaussians(frame.length);
  return frame.map((v, i) => Math.max(0, Math.min(255, Math.round(v + 2 * (g[i] as number)))));
}

const psnr = (a: Uint8Array, b: Uint8Array) => {
  let e = 0;
  for (let i = 0; i < a.length; i++) e += ((a[i] as number) - (b[i] as number)) ** 2;
  return 10 * Math.log10((255 * 255) / (e / a.length));
};

async function markedSegment(frames: Uint8Array[], pattern: Float32Array) {
  const a: Uint8Array[] = [];
  const b: Uint8Array[] = [];
  for (const y of frames) {
    const d = await frameDelta(backend, y, W, H, pattern);
    a.push(applyDelta(y, d, 'A'));
    b.push(applyDelta(y, d, 'B'));
  }
  return { a, b };
}

async function scoreOf(originals: Uint8Array[], suspects: Uint8Array[], count: number) {
  const score = new SegmentScore(count, DEFAULT_VIDEO_MARK);
  for (let i = 0; i < originals.length; i++) {
    const [o, s] = await Promise.all([
      analyse(backend, originals[i] as Uint8Array, W, H, DEFAULT_VIDEO_MARK),
      analyse(backend, suspects[i] as Uint8Array, W, H, DEFAULT_VIDEO_MARK),
    ]);
    score.addFrame(o, s);
  }
  return score;
}

describe('video mark: variants A and B from one analysis, scored against the original', async () => {
  const frames = scene(12);
  const h = halfSize(W, H);
  const count = markedCount(await backend.forward(new Float32Array(h.width * h.height), h.height, h.width, 4), DEFAULT_VIDEO_MARK);
  const pattern = segmentPattern(key, content, 3, count);
  const { a, b } = await markedSegment(frames, pattern);

  it('changes each frame imperceptibly (PSNR ≥ 45 dB), and B by the opposite of A', () => {
    for (let i = 0; i < frames.length; i++) {
      expect(psnr(frames[i] as Uint8Array, a[i] as Uint8Array)).toBeGreaterThan(45);
      expect(psnr(frames[i] as Uint8Array, b[i] as Uint8Array)).toBeGreaterThan(45);
    }
    const y = frames[0] as Uint8Array;
    let opposite = 0;
    let changed = 0;
    for (let i = 0; i < y.length; i++) {
      const da = (a[0] as Uint8Array)[i] as number;
      const db = (b[0] as Uint8Array)[i] as number;
      if (da !== y[i]) {
        changed++;
        if (Math.sign(da - (y[i] as number)) === -Math.sign(db - (y[i] as number))) opposite++;
      }
    }
    expect(changed).toBeGreaterThan(y.length / 10);
    expect(opposite / changed).toBeGreaterThan(0.95);
  });

  it('leaves a flat frame untouched: the change scales with the local texture', async () => {
    const flat = new Uint8Array(W * H).fill(100);
    const d = await frameDelta(backend, flat, W, H, pattern);
    expect(Math.max(...d.map(Math.abs))).toBeLessThan(1e-3);
  });

  it('reads A as bit 0 and B as bit 1 after a noisy re-quantisation', async () => {
    const zA = (await scoreOf(frames, a.map((f, i) => attack(f, i)), count)).z(pattern);
    const zB = (await scoreOf(frames, b.map((f, i) => attack(f, 100 + i)), count)).z(pattern);
    expect(zA).toBeGreaterThan(5);
    expect(zB).toBeLessThan(-5);
    expect(bitFromZ(zA)).toBe('0');
    expect(bitFromZ(zB)).toBe('1');
  });

  it('finds nothing in an unmarked copy, nor with another segment’s or key’s pattern', async () => {
    const unmarked = await scoreOf(frames, frames.map((f, i) => attack(f, 200 + i)), count);
    expect(Math.abs(unmarked.z(pattern))).toBeLessThan(4);
    expect(bitFromZ(unmarked.z(pattern))).toBe('?');
    const marked = await scoreOf(frames, a.map((f, i) => attack(f, 300 + i)), count);
    expect(Math.abs(marked.z(segmentPattern(key, content, 4, count)))).toBeLessThan(4);
    for (const p of nullPatterns(key, content, 3, count, 16)) expect(Math.abs(marked.z(p))).toBeLessThan(4.5);
  });

  it('refuses a pattern or a transform of the wrong size', async () => {
    await expect(frameDelta(backend, frames[0] as Uint8Array, W, H, new Float32Array(10))).rejects.toThrow(/pattern length/);
    const score = new SegmentScore(count, DEFAULT_VIDEO_MARK);
    expect(() => score.z(new Float32Array(3))).toThrow(/pattern length/);
  });
});

describe('half-resolution resampling', () => {
  it('round-trips a smooth image closely, for even and odd sizes', () => {
    for (const [w, h] of [
      [64, 36],
      [65, 37],
    ] as const) {
      const img = Uint8Array.from({ length: w * h }, (_, i) => 128 + Math.round(60 * Math.sin((i % w) / 9) * Math.cos(Math.floor(i / w) / 7)));
      const half = downsampleHalf(img, w, h);
      expect(half.length).toBe(halfSize(w, h).width * halfSize(w, h).height);
      const back = upsampleDouble(half, w, h);
      let worst = 0;
      for (let y = 2; y < h - 2; y++) for (let x = 2; x < w - 2; x++) worst = Math.max(worst, Math.abs((back[y * w + x] as number) - (img[y * w + x] as number)));
      expect(worst).toBeLessThan(6);
    }
  });
});
