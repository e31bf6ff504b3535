import { afterAll, describe, expect, it } from 'vitest';
import { createCpuDirectBackend } from '../../gpu/cpu-direct.js';
import { KeyedRandom, watermarkKey } from '../../src/watermark/keyed-random.js';
import { downsample, reducedSize, upsample, writeVariants } from '../../gpu/resample.js';
import { clampRms } from '../../gpu/modulate.js';
import {
  analyse,
  DEFAULT_VIDEO_MARK,
  markedCount,
  markFrame,
  markFrames,
  patternLength,
  rmsForPsnr,
  segmentGains,
  segmentPattern,
} from '../../src/watermark/video/mark.js';
import { bitFromZ } from '../../src/watermark/score.js';
import { nullPatterns, SegmentScore } from '../../src/watermark/video/score.js';

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
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++)
        out[y * W + x] = Math.max(0, Math.min(255, Math.round(128 + 90 * (blurred[y * big + x + f] as number))));
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
    const { A, B } = await markFrame(backend, Uint8Array.from(y), W, H, segmentGains(pattern), 'both');
    a.push(A as Uint8Array);
    b.push(B as Uint8Array);
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
  const count = patternLength(W, H);
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
    const { A, B } = await markFrame(backend, new Uint8Array(W * H).fill(100), W, H, segmentGains(pattern), 'both');
    expect(A?.every((v) => v === 100)).toBe(true);
    expect(B?.every((v) => v === 100)).toBe(true);
  });

  it('keeps a strongly textured frame within the strongest PSNR of its source, however much α·|c| allows', async () => {
    const busy = frames[0]?.map((v) => (v < 128 ? 20 : 235)) as Uint8Array; // hard-edged texture
    const gains = segmentGains(pattern);
    const strongest = DEFAULT_VIDEO_MARK.psnrDb?.strongest as number;
    const unlimited = await markFrame(backend, Uint8Array.from(busy), W, H, gains, 'A', {
      ...DEFAULT_VIDEO_MARK,
      psnrDb: undefined,
    });
    const limited = await markFrame(backend, Uint8Array.from(busy), W, H, gains, 'A');
    expect(psnr(unlimited.A as Uint8Array, busy)).toBeLessThan(strongest);
    expect(psnr(limited.A as Uint8Array, busy)).toBeGreaterThanOrEqual(strongest - 0.5); // 8-bit rounding
  });

  it('holds δ between the faintest and strongest RMS: scales down, raises at most maxBoost times, leaves 0 and in-range alone', () => {
    const range = { min: rmsForPsnr(58.5), max: rmsForPsnr(52), maxBoost: 4 };
    const rms = (d: Float32Array) => Math.sqrt(d.reduce((s, v) => s + v * v, 0) / d.length);
    const at = (level: number) => Float32Array.from({ length: 1000 }, (_, i) => (i % 2 ? level : -level));
    const cases: Array<[number, number]> = [
      [2, range.max], // too strong: down to the strongest
      [0.45, 0.45], // in range: untouched
      [0.2, range.min], // faint: up to the faintest
      [0.05, 0.2], // very faint: 4× at most
      [0, 0], // flat: nothing to raise
    ];
    for (const [before, after] of cases) {
      const d = at(before);
      clampRms(d, range);
      expect(rms(d)).toBeCloseTo(after, 5);
    }
  });

  it('marks only the luma of a yuv420p frame and passes the chroma through', async () => {
    const yuv = new Uint8Array((W * H * 3) / 2);
    yuv.set(frames[0] as Uint8Array);
    yuv.fill(77, W * H);
    const { B } = await markFrame(backend, Uint8Array.from(yuv), W, H, segmentGains(pattern), 'B');
    expect(B?.subarray(0, W * H)).toEqual(b[0]);
    expect(B?.subarray(W * H).every((v) => v === 77)).toBe(true);
  });

  it('knows the pattern length without a transform, for frame sizes that do and do not divide', async () => {
    for (const [w, h] of [
      [W, H],
      [1920, 1080],
      [1280, 720],
      [854, 480],
      [718, 405],
    ] as const) {
      expect(patternLength(w, h)).toBe(
        markedCount(await analyse(backend, new Uint8Array(w * h), w, h, DEFAULT_VIDEO_MARK), DEFAULT_VIDEO_MARK),
      );
    }
  });

  it('reads A as bit 0 and B as bit 1 after a noisy re-quantisation', async () => {
    const zA = (
      await scoreOf(
        frames,
        a.map((f, i) => attack(f, i)),
        count,
      )
    ).z(pattern);
    const zB = (
      await scoreOf(
        frames,
        b.map((f, i) => attack(f, 100 + i)),
        count,
      )
    ).z(pattern);
    expect(zA).toBeGreaterThan(5);
    expect(zB).toBeLessThan(-5);
    expect(bitFromZ(zA)).toBe('0');
    expect(bitFromZ(zB)).toBe('1');
  });

  it('finds nothing in an unmarked copy, nor with another segment’s or key’s pattern', async () => {
    const unmarked = await scoreOf(
      frames,
      frames.map((f, i) => attack(f, 200 + i)),
      count,
    );
    expect(Math.abs(unmarked.z(pattern))).toBeLessThan(4);
    expect(bitFromZ(unmarked.z(pattern))).toBe('?');
    const marked = await scoreOf(
      frames,
      a.map((f, i) => attack(f, 300 + i)),
      count,
    );
    expect(Math.abs(marked.z(segmentPattern(key, content, 4, count)))).toBeLessThan(4);
    for (const p of nullPatterns(key, content, 3, count, 16)) expect(Math.abs(marked.z(p))).toBeLessThan(4.5);
  });

  const changeOf = (marked: Uint8Array, source: Uint8Array) =>
    Int16Array.from(marked.subarray(0, W * H), (v, i) => v - (source[i] as number));
  const sameShare = (x: Int16Array, y: Int16Array) => x.reduce((n, v, i) => n + (v === y[i] ? 1 : 0), 0) / x.length;

  it('marks a run of frames with the first frame’s change: the next frame of a pan takes the same δ', async () => {
    const [first, second] = await markFrames(
      backend,
      [Uint8Array.from(frames[0] as Uint8Array), Uint8Array.from(frames[1] as Uint8Array)],
      W,
      H,
      segmentGains(pattern),
      'both',
    );
    const own = await markFrame(backend, Uint8Array.from(frames[1] as Uint8Array), W, H, segmentGains(pattern), 'both');
    // Equal up to the odd rounding tie: the follower got δ of frame 0, not its own.
    expect(
      sameShare(
        changeOf(second?.A as Uint8Array, frames[1] as Uint8Array),
        changeOf(first?.A as Uint8Array, frames[0] as Uint8Array),
      ),
    ).toBeGreaterThan(0.999);
    expect(
      sameShare(
        changeOf(second?.B as Uint8Array, frames[1] as Uint8Array),
        changeOf(first?.B as Uint8Array, frames[0] as Uint8Array),
      ),
    ).toBeGreaterThan(0.999);
    expect(
      sameShare(
        changeOf(own.A as Uint8Array, frames[1] as Uint8Array),
        changeOf(first?.A as Uint8Array, frames[0] as Uint8Array),
      ),
    ).toBeLessThan(0.999);
    expect(psnr(second?.A as Uint8Array, frames[1] as Uint8Array)).toBeGreaterThan(45);
  });

  it('gives a frame after a cut its own δ, not the previous shot’s', async () => {
    const other = scene(1, 99)[0] as Uint8Array;
    const [, afterCut] = await markFrames(
      backend,
      [Uint8Array.from(frames[0] as Uint8Array), Uint8Array.from(other)],
      W,
      H,
      segmentGains(pattern),
      'A',
    );
    const own = await markFrame(backend, Uint8Array.from(other), W, H, segmentGains(pattern), 'A');
    expect(afterCut?.A).toEqual(own.A);
  });

  it('reads the bit of a segment marked in runs of two frames as well as one marked frame by frame', async () => {
    const runs: Uint8Array[] = [];
    for (let i = 0; i < frames.length; i += 2) {
      const marked = await markFrames(
        backend,
        frames.slice(i, i + 2).map((f) => Uint8Array.from(f)),
        W,
        H,
        segmentGains(pattern),
        'B',
      );
      runs.push(...marked.map((m) => m.B as Uint8Array));
    }
    const perFrame = (
      await scoreOf(
        frames,
        b.map((f, i) => attack(f, 400 + i)),
        count,
      )
    ).z(pattern);
    const inRuns = (
      await scoreOf(
        frames,
        runs.map((f, i) => attack(f, 400 + i)),
        count,
      )
    ).z(pattern);
    expect(inRuns).toBeLessThan(-5);
    expect(inRuns).toBeLessThan(0.8 * perFrame);
  });

  it('refuses a pattern or a transform of the wrong size', async () => {
    await expect(
      markFrame(backend, Uint8Array.from(frames[0] as Uint8Array), W, H, new Float32Array(10), 'A'),
    ).rejects.toThrow(/10 gains for \d+ coefficients/);
    const score = new SegmentScore(count, DEFAULT_VIDEO_MARK);
    expect(() => score.z(new Float32Array(3))).toThrow(/pattern length/);
  });
});

describe('resampling for the mark', () => {
  const sizes = [
    [64, 36],
    [65, 37],
    [70, 41],
  ] as const;
  const smooth = (w: number, h: number) =>
    Uint8Array.from(
      { length: w * h },
      (_, i) => 128 + Math.round(60 * Math.sin((i % w) / 9) * Math.cos(Math.floor(i / w) / 7)),
    );

  it.each([2, 4])(
    'round-trips a smooth image closely through a %i× reduction, for sizes that do and do not divide',
    (factor) => {
      for (const [w, h] of sizes) {
        const img = smooth(w, h);
        const small = downsample(img, w, h, factor);
        expect(small.length).toBe(reducedSize(w, h, factor).width * reducedSize(w, h, factor).height);
        const back = upsample(small, w, h, factor);
        let worst = 0;
        for (let y = factor; y < h - 2 * factor; y++)
          for (let x = factor; x < w - 2 * factor; x++)
            worst = Math.max(worst, Math.abs((back[y * w + x] as number) - (img[y * w + x] as number)));
        expect(worst).toBeLessThan(3 * factor);
      }
    },
  );

  it('averages whole boxes: a 4x4 checkerboard of 0 and 255 reduces to flat grey', () => {
    const img = Uint8Array.from({ length: 16 * 8 }, (_, i) => (((i % 16) + Math.floor(i / 16)) % 2 === 0 ? 0 : 255));
    expect([...downsample(img, 16, 8, 4)]).toEqual(new Array(8).fill(127.5));
  });

  it('gives the plain box average on the 4× fast path (whole words) and off it', () => {
    const w = 24;
    const h = 13;
    const img = Uint8Array.from({ length: w * h + 1 }, (_, i) => (i * 97 + 13) % 256);
    const naive = (src: Uint8Array, width: number) =>
      Array.from({ length: 3 * Math.floor(width / 4) }, (_, k) => {
        const i = Math.floor(k / Math.floor(width / 4));
        const j = k % Math.floor(width / 4);
        let sum = 0;
        for (let y = 4 * i; y < 4 * i + 4; y++)
          for (let x = 4 * j; x < 4 * j + 4; x++) sum += src[y * width + x] as number;
        return sum / 16;
      });
    expect([...downsample(img.subarray(0, w * h), w, h, 4)]).toEqual(naive(img, w)); // fast path
    const shifted = img.subarray(1); // not word-aligned: the general path
    expect([...downsample(shifted, w, h, 4)]).toEqual(naive(shifted, w));
    expect([...downsample(img, w - 1, h, 4)]).toEqual(naive(img, w - 1));
  });

  it('writes the variants of frames of any size in turn, clipping at black and white', () => {
    const clip = (v: number) => Math.min(255, Math.max(0, Math.round(v)));
    // Large, small, then large again: the kernel's memory grows and is laid out afresh each time.
    for (const [w, h] of [
      [1283, 721],
      [37, 23],
      [1920, 1080],
    ] as const) {
      const r = reducedSize(w, h, 4);
      const luma = Uint8Array.from({ length: w * h }, (_, i) => (i * 7919) % 256);
      const delta = Float32Array.from({ length: r.width * r.height }, (_, i) => ((i * 31) % 61) - 30);
      const enlarged = upsample(delta, w, h, 4);
      const a = new Uint8Array(w * h);
      const b = new Uint8Array(w * h);
      writeVariants(luma, delta, w, h, 4, { a, b });
      let worst = 0;
      let clipped = 0;
      for (let i = 0; i < w * h; i++) {
        const plus = (luma[i] as number) + (enlarged[i] as number);
        if (plus < 0 || plus > 255) clipped++;
        worst = Math.max(
          worst,
          Math.abs((a[i] as number) - clip(plus)),
          Math.abs((b[i] as number) - clip((luma[i] as number) - (enlarged[i] as number))),
        );
      }
      expect(worst, `${w}x${h}`).toBeLessThanOrEqual(1);
      expect(clipped).toBeGreaterThan(0);
    }
  });

  it('writes A = Y + δ and B = Y − δ rounded and clipped, even into the luma itself', () => {
    const w = 9;
    const h = 6;
    const luma = Uint8Array.from({ length: w * h }, (_, i) => (i * 37) % 256);
    const delta = Float32Array.from(
      { length: reducedSize(w, h, 2).width * reducedSize(w, h, 2).height },
      (_, i) => (i % 5) * 3.3 - 6,
    );
    const enlarged = upsample(delta, w, h, 2);
    const a = new Uint8Array(w * h);
    const b = new Uint8Array(w * h);
    writeVariants(luma, delta, w, h, 2, { a, b });
    const clip = (v: number) => Math.min(255, Math.max(0, Math.round(v)));
    for (let i = 0; i < w * h; i++) {
      expect(Math.abs((a[i] as number) - clip((luma[i] as number) + (enlarged[i] as number)))).toBeLessThanOrEqual(1);
      expect(Math.abs((b[i] as number) - clip((luma[i] as number) - (enlarged[i] as number)))).toBeLessThanOrEqual(1);
    }
    const inPlace = Uint8Array.from(luma);
    writeVariants(inPlace, delta, w, h, 2, { b: inPlace });
    expect(inPlace).toEqual(b);
  });
});
