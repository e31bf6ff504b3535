import type { Picture, Rect } from './geometry.js';

/**
 * A projective map of the plane, row-major 3 × 3: (x, y) ↦ ((h0·x + h1·y + h2) / d, (h3·x + h4·y + h5) / d)
 * with d = h6·x + h7·y + h8. A leak that was rotated, seen at an angle (keystone) or filmed off a
 * screen shows the original through such a map; a crop and a rescale are the special case with
 * h1 = h3 = h6 = h7 = 0. Coordinates are continuous: pixel i covers [i, i + 1), its centre is i + 0.5.
 */
export type Homography = readonly [number, number, number, number, number, number, number, number, number];

/** Where `h` takes (x, y); undefined behind the camera (d ≤ 0), where no picture point lands. */
export function mapPoint(h: Homography, x: number, y: number): [number, number] | undefined {
  const d = h[6] * x + h[7] * y + h[8];
  if (!(d > 1e-9)) return undefined;
  return [(h[0] * x + h[1] * y + h[2]) / d, (h[3] * x + h[4] * y + h[5]) / d];
}

/** a ∘ b: b first, then a. */
export function compose(a: Homography, b: Homography): Homography {
  const out = new Array<number>(9);
  for (let r = 0; r < 3; r++) {
    for (let c = 0; c < 3; c++) {
      let sum = 0;
      for (let k = 0; k < 3; k++) sum += (a[r * 3 + k] as number) * (b[k * 3 + c] as number);
      out[r * 3 + c] = sum;
    }
  }
  return normalized(out);
}

/** The inverse map (the adjugate, scaled so that h8 is 1 where it can be). */
export function invert(h: Homography): Homography {
  const [a, b, c, d, e, f, g, i, k] = h;
  return normalized([
    e * k - f * i,
    c * i - b * k,
    b * f - c * e,
    f * g - d * k,
    a * k - c * g,
    c * d - a * f,
    d * i - e * g,
    b * g - a * i,
    a * e - b * d,
  ]);
}

function normalized(m: number[]): Homography {
  const s = Math.abs(m[8] as number) > 1e-12 ? 1 / (m[8] as number) : 1;
  return m.map((v) => v * s) as unknown as Homography;
}

/** The affine map taking (x, y) to (sx·x + tx, sy·y + ty). */
export const scaleShift = (sx: number, sy: number, tx: number, ty: number): Homography => [
  sx,
  0,
  tx,
  0,
  sy,
  ty,
  0,
  0,
  1,
];

/** The map that takes rectangle `from` onto rectangle `to`, axis by axis. */
export function rectOnto(from: Rect, to: Rect): Homography {
  const sx = to.w / from.w;
  const sy = to.h / from.h;
  return scaleShift(sx, sy, to.x - from.x * sx, to.y - from.y * sy);
}

/** Where the rectangle's corners go: top left, top right, bottom right, bottom left. */
export function corners(h: Homography, r: Rect): Array<[number, number] | undefined> {
  return [
    mapPoint(h, r.x, r.y),
    mapPoint(h, r.x + r.w, r.y),
    mapPoint(h, r.x + r.w, r.y + r.h),
    mapPoint(h, r.x, r.y + r.h),
  ];
}

/** Bilinear value of a picture at continuous index (u, v) (pixel centres at whole numbers), clamped at the edges. */
export function bilinear(data: ArrayLike<number>, width: number, height: number, u: number, v: number): number {
  const cu = Math.min(width - 1, Math.max(0, u));
  const cv = Math.min(height - 1, Math.max(0, v));
  const i = Math.floor(cu);
  const j = Math.floor(cv);
  const i1 = Math.min(width - 1, i + 1);
  const j1 = Math.min(height - 1, j + 1);
  const a = cu - i;
  const b = cv - j;
  const top = (data[j * width + i] as number) * (1 - a) + (data[j * width + i1] as number) * a;
  const bottom = (data[j1 * width + i] as number) * (1 - a) + (data[j1 * width + i1] as number) * a;
  return top * (1 - b) + bottom * b;
}

/**
 * A picture seen through a map, on a grid of width × height: cell (c, r) reads `pic` where `map`
 * takes the cell's centre. Cells that land more than half a pixel outside the picture are NaN
 * (the corners a rotation or keystone fills with black match nothing of the original), and
 * ./geometry.ts's correlation and ./align.ts's tone curve leave them out.
 */
export function warpedView(pic: Picture, map: Homography, width: number, height: number, inset = -0.5): Float32Array {
  const out = new Float32Array(width * height);
  for (let r = 0; r < height; r++) {
    for (let c = 0; c < width; c++) {
      const p = mapPoint(map, c + 0.5, r + 0.5);
      const inside = p && p[0] > inset && p[1] > inset && p[0] < pic.width - inset && p[1] < pic.height - inset;
      out[r * width + c] = inside ? bilinear(pic.data, pic.width, pic.height, p[0] - 0.5, p[1] - 0.5) : Number.NaN;
    }
  }
  return out;
}

/** Catmull-Rom weights of the four taps around a sample at fraction t past the second. */
function cubicWeights(t: number, out: Float64Array): void {
  const t2 = t * t;
  const t3 = t2 * t;
  out[0] = -0.5 * t3 + t2 - 0.5 * t;
  out[1] = 1.5 * t3 - 2.5 * t2 + 1;
  out[2] = -1.5 * t3 + 2 * t2 + 0.5 * t;
  out[3] = 0.5 * t3 - 0.5 * t2;
}

const wx = new Float64Array(4);
const wy = new Float64Array(4);

/**
 * Bicubic (Catmull-Rom) value of a picture at continuous index (u, v), clamped at the edges. Where
 * a leak is restored at fractions of a pixel, bilinear sampling halves the finest detail the mark
 * lives in (a two-tap average at half a pixel passes cos(π/4) of a 4-pixel wave); the cubic keeps
 * most of it.
 */
export function bicubic(data: ArrayLike<number>, width: number, height: number, u: number, v: number): number {
  const cu = Math.min(width - 1, Math.max(0, u));
  const cv = Math.min(height - 1, Math.max(0, v));
  const i = Math.floor(cu);
  const j = Math.floor(cv);
  cubicWeights(cu - i, wx);
  cubicWeights(cv - j, wy);
  let sum = 0;
  for (let b = 0; b < 4; b++) {
    const row = Math.min(height - 1, Math.max(0, j - 1 + b)) * width;
    let across = 0;
    for (let a = 0; a < 4; a++)
      across += (wx[a] as number) * (data[row + Math.min(width - 1, Math.max(0, i - 1 + a))] as number);
    sum += (wy[b] as number) * across;
  }
  return sum;
}
