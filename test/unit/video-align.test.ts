import { describe, expect, it } from 'vitest';
import { alignTime, framePositions, refineTime } from '../../src/watermark/video/align.js';
import { realignPieces } from '../../src/watermark/video/align-pieces.js';
import { readAhead } from '../../src/watermark/in-order.js';

/**
 * Unit-norm signatures that tell every frame apart: each frame `keep` of the last plus new detail.
 * keep = 1 is a seeded walk (neighbours alike, far frames still alike); keep < 1 forgets, so far
 * frames are unalike, as scenes of a real film are.
 */
function film(frames: number, seed = 7, keep = 1, step = 0.6): Float32Array[] {
  let s = seed;
  const rand = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648 - 0.5;
  };
  const out: Float32Array[] = [];
  let v = Float32Array.from({ length: 48 }, rand);
  for (let i = 0; i < frames; i++) {
    v = v.map((x) => keep * x + step * rand());
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    const c = v.map((x) => x - mean);
    const norm = Math.sqrt(c.reduce((a, b) => a + b * b, 0));
    out.push(c.map((x) => x / norm));
  }
  return out;
}

/** A film of scenes: frames far apart are unalike. */
const scenes = (frames: number, seed = 11) => film(frames, seed, 0.97, 0.25);

describe('lining a leak up in time with its original', () => {
  it('finds the offset of a leak sampled every fourth frame, and each sample its own original frame', () => {
    const original = film(900);
    // The leak starts 137 frames into the original (its first 137 frames cut) and keeps frames 0, 4, 8, …
    const leak = Array.from({ length: 150 }, (_, k) => original[137 + 4 * k] as Float32Array);
    const time = alignTime(
      leak,
      original,
      Int32Array.from(leak, (_, k) => 4 * k),
    );
    expect(time.offset).toBe(137);
    expect(time.correlation).toBeGreaterThan(0.99);
    expect([...time.frameMap]).toEqual(leak.map((_, k) => 137 + 4 * k));
  });

  it('places samples taken at uneven times (the P-frames of a leak whose B-frames were skipped) where they are', () => {
    const original = film(900);
    // A 25-fps leak of a 30-fps original from its frame 60, kept at 0, 0.12, 0.32, 0.44, 0.64, … s.
    const times = Float64Array.from({ length: 120 }, (_, k) => k * 0.16 - (k % 2) * 0.04);
    const positions = framePositions(times, 30);
    const leak = [...positions].map((p) => original[60 + p] as Float32Array);
    const time = alignTime(leak, original, positions);
    expect(time.offset).toBe(60);
    expect([...time.frameMap]).toEqual([...positions].map((p) => 60 + p));
  });

  it('refines each sample to the original frame that its finer comparison prefers', () => {
    const original = film(400);
    const leak = Array.from({ length: 60 }, (_, k) => original[20 + 4 * k] as Float32Array);
    const coarse = {
      ...alignTime(
        leak,
        original,
        Int32Array.from(leak, (_, k) => 4 * k),
      ),
    };
    // A comparison that (like a pan seen through the crop) says sample 10 is really frame 61, not 60.
    const score = (k: number, i: number) => (k === 10 ? (i === 61 ? 1 : 0.5) : i === 20 + 4 * k ? 1 : 0.5);
    const fine = refineTime(coarse, original.length, score);
    expect(fine.offset).toBe(20);
    expect(fine.frameMap[10]).toBe(61);
    expect(fine.frameMap[11]).toBe(64);
  });
});

describe('lining each piece of a leak up on its own', () => {
  /** A leak made of runs of original frames, sampled every fourth leak frame: [start, length] per run, each at `speed`. */
  function leakOf(original: Float32Array[], runs: Array<[number, number]>, speed = 1) {
    const frames = runs.flatMap(([start, length]) =>
      Array.from({ length: Math.floor(length / speed) }, (_, i) => start + Math.round(i * speed)),
    );
    const ks = Array.from({ length: Math.floor(frames.length / 4) }, (_, k) => 4 * k);
    return {
      leak: ks.map((i) => original[frames[i] as number] as Float32Array),
      positions: Int32Array.from(ks),
      truth: ks.map((i) => frames[i] as number),
    };
  }
  const agreeing = (found: Int32Array, truth: number[]) =>
    truth.filter((t, k) => Math.abs((found[k] as number) - t) <= 1).length / truth.length;

  it('finds segments in reverse order where one offset finds only one of them', () => {
    const original = scenes(1500);
    // six 10-s segments at 25 fps (250 frames), leaked last first
    const { leak, positions, truth } = leakOf(
      original,
      [1250, 1000, 750, 500, 250, 0].map((s) => [s, 250] as [number, number]),
    );
    const global = alignTime(leak, original, positions);
    expect(agreeing(global.frameMap, truth)).toBeLessThan(0.3);
    const pieces = realignPieces(global, leak, original);
    expect(agreeing(pieces.frameMap, truth)).toBeGreaterThan(0.9);
  });

  it('follows a leak played 8% fast, with segments dropped and one repeated', () => {
    const original = scenes(1500);
    const { leak, positions, truth } = leakOf(
      original,
      [
        [0, 250],
        [500, 250],
        [500, 250],
        [1000, 250],
      ],
      1.08,
    );
    const global = alignTime(leak, original, positions);
    expect(agreeing(global.frameMap, truth)).toBeLessThan(0.3);
    const pieces = realignPieces(global, leak, original);
    expect(agreeing(pieces.frameMap, truth)).toBeGreaterThan(0.85);
  });

  it('places the spans left of a slowly changing film with two spans cut out where its pictures fit best', () => {
    // A walk that changes slowly: near the place a span would have had without the cut its pictures still fit well
    // (0.9 and more), where they really came from better. Keeping a "sure" near fit put 20% of the samples wrong.
    const original = film(1500, 5, 1, 0.6);
    const { leak, positions, truth } = leakOf(original, [
      [100, 400],
      [800, 400],
      [1300, 200],
    ]);
    const global = alignTime(leak, original, positions);
    expect(agreeing(realignPieces(global, leak, original).frameMap, truth)).toBeGreaterThan(0.95);
  });

  it('leaves a leak that one offset explains as it was', () => {
    const original = film(900);
    const leak = Array.from({ length: 150 }, (_, k) => original[137 + 4 * k] as Float32Array);
    const global = alignTime(
      leak,
      original,
      Int32Array.from(leak, (_, k) => 4 * k),
    );
    expect(realignPieces(global, leak, original)).toEqual(global);
  });

  it('leaves a piece of another film unmatched', () => {
    const original = scenes(900);
    const other = scenes(400, 99);
    const leak = [
      ...Array.from({ length: 60 }, (_, k) => original[100 + 4 * k] as Float32Array),
      ...Array.from({ length: 40 }, (_, k) => other[4 * k] as Float32Array),
    ];
    const pieces = realignPieces(
      alignTime(
        leak,
        original,
        Int32Array.from(leak, (_, k) => 4 * k),
      ),
      leak,
      original,
    );
    expect([...pieces.frameMap.slice(60)].every((i) => i === -1)).toBe(true);
  });
});

describe('reading ahead of a consumer', () => {
  it('keeps the source pulled up to its depth ahead, in order, and stops it when the consumer stops', async () => {
    let produced = 0;
    let stopped = false;
    async function* source() {
      try {
        for (let i = 0; i < 100; i++) {
          produced++;
          yield i;
        }
      } finally {
        stopped = true;
      }
    }
    const seen: number[] = [];
    for await (const v of readAhead(source(), 5)) {
      seen.push(v);
      await new Promise((r) => setTimeout(r, 1));
      // While the consumer works on one item, the next ones are already made.
      expect(produced).toBeGreaterThanOrEqual(Math.min(100, seen.length + 4));
      if (seen.length === 10) break;
    }
    expect(seen).toEqual([...Array(10).keys()]);
    expect(stopped).toBe(true);
    expect(produced).toBeLessThanOrEqual(16);
  });

  it('passes the source’s error on to the consumer', async () => {
    async function* failing() {
      yield 1;
      throw new Error('decoder failed');
    }
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const v of readAhead(failing(), 4)) seen.push(v);
      })(),
    ).rejects.toThrow('decoder failed');
    expect(seen).toEqual([1]);
  });
});
