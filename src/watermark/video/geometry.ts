/**
 * Where a leak's picture sits in the original. A leak may be scaled, slightly cropped (and
 * scaled back up) or letterboxed: after its black bars are cut off (`active`, in leak pixels),
 * what remains is a uniformly scaled view of a rectangle of the original (`rect`, in original
 * pixels). The search for that rectangle (./find-rect.ts) compares small grey pictures by
 * normalized cross-correlation, coarse to fine, with the pieces below.
 */
export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A grey picture at some scale of its source: the data and how many source pixels one pixel spans. */
export interface Picture {
  data: Uint8Array | Float32Array;
  width: number;
  height: number;
}

/**
 * Where `count` evenly spaced samples across [start, start + length) of a source axis fall in a
 * picture that is `scale` of the source and `size` pixels long: for each, the two neighbouring
 * pixels and the second one's weight (bilinear, clamped at the edges). Rows and columns of a
 * rectangle's samples are independent, so each is worked out once per axis, not per pixel.
 */
interface Axis {
  lo: Int32Array;
  hi: Int32Array;
  weight: Float64Array;
}

function axis(start: number, length: number, count: number, every: number, scale: number, size: number): Axis {
  const n = Math.ceil(count / every);
  const out = { lo: new Int32Array(n), hi: new Int32Array(n), weight: new Float64Array(n) };
  for (let k = 0; k < n; k++) {
    const x = start + ((k * every + 0.5) / count) * length - 0.5;
    const u = Math.min(size - 1, Math.max(0, (x + 0.5) * scale - 0.5));
    const i = Math.floor(u);
    out.lo[k] = i;
    out.hi[k] = Math.min(size - 1, i + 1);
    out.weight[k] = u - i;
  }
  return out;
}

/**
 * `pic` (a downscaled copy of a source of sourceWidth pixels) seen through `rect` (source
 * pixels) on a grid of width × height, every `every`-th row and column of it, into `out` in row order.
 */
export function sampleThrough(
  pic: Picture,
  sourceWidth: number,
  rect: Rect,
  width: number,
  height: number,
  every: number,
  out: Float32Array | Float64Array,
): void {
  const f = pic.width / sourceWidth;
  const cols = axis(rect.x, rect.w, width, every, f, pic.width);
  const rows = axis(rect.y, rect.h, height, every, f, pic.height);
  const d = pic.data;
  let n = 0;
  for (let r = 0; r < rows.lo.length; r++) {
    const top = (rows.lo[r] as number) * pic.width;
    const bottom = (rows.hi[r] as number) * pic.width;
    const b = rows.weight[r] as number;
    for (let c = 0; c < cols.lo.length; c++) {
      const i = cols.lo[c] as number;
      const i1 = cols.hi[c] as number;
      const a = cols.weight[c] as number;
      const t = (d[top + i] as number) * (1 - a) + (d[top + i1] as number) * a;
      const l = (d[bottom + i] as number) * (1 - a) + (d[bottom + i1] as number) * a;
      out[n++] = t * (1 - b) + l * b;
    }
  }
}

/** The original seen through `rect`, sampled on the grid of a leak picture of width × height. */
export function viewThrough(
  original: Picture,
  originalWidth: number,
  rect: Rect,
  width: number,
  height: number,
): Float32Array {
  const out = new Float32Array(width * height);
  sampleThrough(original, originalWidth, rect, width, height, 1, out);
  return out;
}

/** Area-average resize of a grey picture (for making the search's small pictures from full frames). */
export function resizeArea(
  data: Uint8Array,
  width: number,
  height: number,
  region: Rect,
  outWidth: number,
  outHeight: number,
): Float32Array {
  const out = new Float32Array(outWidth * outHeight);
  for (let v = 0; v < outHeight; v++) {
    const y0 = Math.floor(region.y + (v * region.h) / outHeight);
    const y1 = Math.min(height, Math.max(y0 + 1, Math.floor(region.y + ((v + 1) * region.h) / outHeight)));
    for (let u = 0; u < outWidth; u++) {
      const x0 = Math.floor(region.x + (u * region.w) / outWidth);
      const x1 = Math.min(width, Math.max(x0 + 1, Math.floor(region.x + ((u + 1) * region.w) / outWidth)));
      let sum = 0;
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) sum += data[y * width + x] as number;
      out[v * outWidth + u] = sum / ((y1 - y0) * (x1 - x0));
    }
  }
  return out;
}

/**
 * Normalized cross-correlation of two pictures of the same size (1: equal up to brightness and
 * contrast), over the pixels where both are numbers (./homography.ts's warpedView marks with NaN
 * what a turned or tilted leak does not show).
 */
export function correlation(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sa = 0;
  let sb = 0;
  let saa = 0;
  let sbb = 0;
  let sab = 0;
  let n = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    if (Number.isNaN(x + y)) continue;
    n++;
    sa += x;
    sb += y;
    saa += x * x;
    sbb += y * y;
    sab += x * y;
  }
  const den = Math.sqrt((saa - (sa * sa) / n) * (sbb - (sb * sb) / n));
  return den > 0 ? (sab - (sa * sb) / n) / den : 0;
}
