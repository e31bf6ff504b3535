import { describe, expect, it } from 'vitest';
import { findRect } from '../../src/watermark/video/find-rect.js';
import { fitHomography } from '../../src/watermark/video/fit-homography.js';
import { type Rect, resizeArea, viewThrough } from '../../src/watermark/video/geometry.js';
import {
  compose,
  corners,
  type Homography,
  invert,
  mapPoint,
  rectOnto,
  scaleShift,
  warpedView,
} from '../../src/watermark/video/homography.js';

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
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++)
      out[y * W + x] = 128 + waves.reduce((sum, [a, b, c]) => sum + 10 * Math.sin(a * x + b * y + c), 0);
  return out;
}

/** Six frame pairs at the search size (320 wide): each original, and the leak showing `rect` of it. */
function pairsShowing(rect: Rect) {
  const whole = { x: 0, y: 0, w: W, h: H };
  return Array.from({ length: 6 }, (_, n) => {
    const original = picture(n + 1);
    const leak = Uint8Array.from(viewThrough({ data: original, width: W, height: H }, W, rect, W, H), (v) =>
      Math.round(v),
    );
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

// The search pictures of a leak that shows the original through a projective map: 320 × 180 each.
const SW = 320;
const SH = 180;

/** Six pairs whose leak shows the original through `map` (original search pixel to leak search pixel), with black where it shows nothing. */
function pairsThrough(map: Homography) {
  const back = invert(map);
  return Array.from({ length: 6 }, (_, n) => {
    const original = resizeArea(picture(n + 1), W, H, { x: 0, y: 0, w: W, h: H }, SW, SH);
    const leak = Float32Array.from(warpedView({ data: original, width: SW, height: SH }, back, SW, SH), (v) =>
      Number.isNaN(v) ? 0 : v,
    );
    return { leak: { data: leak, width: SW, height: SH }, original: { data: original, width: SW, height: SH } };
  });
}

/** The largest distance (search pixels) between where two maps put the original's inner corners. */
function cornerError(a: Homography, b: Homography): number {
  const inner = { x: 40, y: 20, w: SW - 80, h: SH - 40 };
  const cb = corners(b, inner);
  return Math.max(
    ...corners(a, inner).map((p, i) => {
      const [x, y] = p as [number, number];
      const [tx, ty] = cb[i] as [number, number];
      return Math.hypot(x - tx, y - ty);
    }),
  );
}

/** The map of a turn by `degrees` about the picture's centre. */
function turn(degrees: number): Homography {
  const t = (degrees * Math.PI) / 180;
  const [c, s] = [Math.cos(t), Math.sin(t)];
  const rotate: Homography = [c, -s, 0, s, c, 0, 0, 0, 1];
  return compose(scaleShift(1, 1, SW / 2, SH / 2), compose(rotate, scaleShift(1, 1, -SW / 2, -SH / 2)));
}

describe('fitting the projective map of a turned or tilted leak', () => {
  const whole = { x: 0, y: 0, w: SW, h: SH };

  it('finds a 4° turn from the untouched rectangle, to a tenth of a pixel', () => {
    const truth = turn(4);
    const fit = fitHomography(pairsThrough(truth), rectOnto(whole, whole));
    expect(cornerError(fit.map, truth)).toBeLessThan(0.1);
    expect(fit.score).toBeGreaterThan(0.99);
  });

  it('finds a 5% keystone (the top edge narrowed, as a screen filmed from below)', () => {
    // Where the original's corners land: the top ones pulled in by 5% of the width each side.
    const truth = quadMap([
      [0.05 * SW, 0],
      [0.95 * SW, 0],
      [SW, SH],
      [0, SH],
    ]);
    const fit = fitHomography(pairsThrough(truth), rectOnto(whole, whole));
    expect(cornerError(fit.map, truth)).toBeLessThan(0.1);
    const top = mapPoint(fit.map, SW / 2, 0) as [number, number];
    expect(top[1]).toBeCloseTo(0, 0);
  });

  it('leaves a leak that was only cropped on its rectangle', () => {
    const truth = rectOnto({ x: 16, y: 9, w: SW - 32, h: SH - 18 }, whole);
    const fit = fitHomography(pairsThrough(truth), rectOnto({ x: 15, y: 10, w: SW - 31, h: SH - 19 }, whole));
    expect(cornerError(fit.map, truth)).toBeLessThan(0.1);
  });
});

/** The projective map taking the corners of the search picture (clockwise from the top left) to `quad`. */
function quadMap(quad: Array<[number, number]>): Homography {
  // The unit square to the quad (Heckbert's closed form), after the picture to the unit square.
  const [[x0, y0], [x1, y1], [x2, y2], [x3, y3]] = quad as [
    [number, number],
    [number, number],
    [number, number],
    [number, number],
  ];
  const dx1 = x1 - x2;
  const dx2 = x3 - x2;
  const dy1 = y1 - y2;
  const dy2 = y3 - y2;
  const sx = x0 - x1 + x2 - x3;
  const sy = y0 - y1 + y2 - y3;
  const den = dx1 * dy2 - dx2 * dy1;
  const g = (sx * dy2 - dx2 * sy) / den;
  const h = (dx1 * sy - sx * dy1) / den;
  const square: Homography = [x1 - x0 + g * x1, x3 - x0 + h * x3, x0, y1 - y0 + g * y1, y3 - y0 + h * y3, y0, g, h, 1];
  return compose(square, scaleShift(1 / SW, 1 / SH, 0, 0));
}
