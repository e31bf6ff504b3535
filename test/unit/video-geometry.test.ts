import { describe, expect, it } from 'vitest';
import { findRect } from '../../src/watermark/video/find-rect.js';
import { type Rect, resizeArea, viewThrough } from '../../src/watermark/video/geometry.js';

// A reference plane of 480 × 270 with smooth, seeded content, and leaks that show a rectangle of it.
const W = 480;
const H = 270;

function picture(seed: number): Uint8Array {
  let s = seed;
  const rand = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const waves = Array.from({ length: 6 }, () => [rand() * 0.08, rand() * 0.08, rand() * 6] as const);
  const out = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) out[y * W + x] = 128 + waves.reduce((sum, [a, b, c]) => sum + 10 * Math.sin(a * x + b * y + c), 0);
  return out;
}

/** Six frame pairs at the search size (320 wide): each original, and the leak showing `rect` of it. */
function pairsShowing(rect: Rect) {
  const whole = { x: 0, y: 0, w: W, h: H };
  return Array.from({ length: 6 }, (_, n) => {
    const original = picture(n + 1);
    const leak = Uint8Array.from(viewThrough({ data: original, width: W, height: H }, W, rect, W, H), (v) => Math.round(v));
    return {
      leak: { data: resizeArea(leak, W, H, whole, 320, 180), width: 320, height: 180 },
      original: { data: resizeArea(original, W, H, whole, 320, 180), width: 320, height: 180 },
    };
  });
}

describe('finding where a leak’s picture sits in the original', () => {
  it('takes the untouched frame for a leak that was not cropped', () => {
    const { rect, score } = findRect(pairsShowing({ x: 0, y: 0, w: W, h: H }), W, H, H / W);
    expect(rect).toEqual({ x: 0, y: 0, w: W, h: H });
    expect(score).toBeGreaterThan(0.999);
  });

  for (const crop of [0.01, 0.05]) {
    it(`finds a ${crop * 100}% crop, however close to the whole frame`, () => {
      const truth = { x: (W * crop) / 2, y: (H * crop) / 2, w: W * (1 - crop), h: H * (1 - crop) };
      const { rect } = findRect(pairsShowing(truth), W, H, H / W);
      expect(Math.abs(rect.x - truth.x)).toBeLessThan(0.5);
      expect(Math.abs(rect.y - truth.y)).toBeLessThan(0.5);
      expect(Math.abs(rect.w - truth.w)).toBeLessThan(1);
    });
  }
});
