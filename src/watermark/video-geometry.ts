/**
 * Where a leak's picture sits in the original. A leak may be scaled, slightly cropped (and
 * scaled back up) or letterboxed: after its black bars are cut off (`active`, in leak pixels),
 * what remains is a uniformly scaled view of a rectangle of the original (`rect`, in original
 * pixels). The search below finds that rectangle by normalized cross-correlation of small
 * grey pictures, coarse to fine.
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
function sampleThrough(pic: Picture, sourceWidth: number, rect: Rect, width: number, height: number, every: number, out: Float32Array | Float64Array): void {
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
export function viewThrough(original: Picture, originalWidth: number, rect: Rect, width: number, height: number): Float32Array {
  const out = new Float32Array(width * height);
  sampleThrough(original, originalWidth, rect, width, height, 1, out);
  return out;
}

/** Area-average resize of a grey picture (for making the search's small pictures from full frames). */
export function resizeArea(data: Uint8Array, width: number, height: number, region: Rect, outWidth: number, outHeight: number): Float32Array {
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

/** Normalized cross-correlation of two pictures of the same size (1: equal up to brightness and contrast). */
export function correlation(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sa = 0;
  let sb = 0;
  let saa = 0;
  let sbb = 0;
  let sab = 0;
  const n = a.length;
  for (let i = 0; i < n; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    sa += x;
    sb += y;
    saa += x * x;
    sbb += y * y;
    sab += x * y;
  }
  const den = Math.sqrt((saa - (sa * sa) / n) * (sbb - (sb * sb) / n));
  return den > 0 ? (sab - (sa * sb) / n) / den : 0;
}

type Pairs = ReadonlyArray<{ leak: Picture; original: Picture }>;

/**
 * Scores rectangles: the normalized cross-correlation between leak pictures (each the whole
 * active area) and the matching original pictures seen through `rect`, on every `step`-th row and
 * column. 1 is a perfect match up to brightness and contrast. The leak's pixels on each grid, and
 * room for the original's view on it, are made once: the search scores thousands of rectangles.
 */
function rectScorer(pairs: Pairs, originalWidth: number): (rect: Rect, step: number) => number {
  const grids = new Map<number, Array<{ pixels: Float64Array; view: Float64Array }>>();
  const gridsFor = (step: number) => {
    let made = grids.get(step);
    if (!made) {
      made = pairs.map(({ leak }) => {
        const cols = Math.ceil(leak.width / step);
        const rows = Math.ceil(leak.height / step);
        const pixels = new Float64Array(cols * rows);
        for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) pixels[r * cols + c] = leak.data[r * step * leak.width + c * step] as number;
        return { pixels, view: new Float64Array(cols * rows) };
      });
      grids.set(step, made);
    }
    return made;
  };
  return (rect, step) => {
    const made = gridsFor(step);
    let total = 0;
    for (const [n, { leak, original }] of pairs.entries()) {
      const { pixels, view } = made[n] as { pixels: Float64Array; view: Float64Array };
      sampleThrough(original, originalWidth, rect, leak.width, leak.height, step, view);
      total += correlation(pixels, view);
    }
    return total / pairs.length;
  };
}

/** Scores this close count as equal, and the untouched frame wins (see findRect). */
const TIE = 0.002;

/**
 * Below this score the untouched frame is never taken without the whole search: a large crop can
 * leave the whole frame a local best among its neighbours, though a poor match.
 */
const WHOLE_FRAME_MATCH = 0.95;

/**
 * The rectangle of the original (width × height) that the leak's active area shows. Coarse: every
 * scale from minScale to 1 in steps of 1%, with the active area's aspect, at positions two
 * picture pixels apart, comparing every fourth pixel. Fine: centre and scale in halving steps,
 * comparing every pixel. Returns the rectangle and its score.
 */
export function findRect(
  pairs: Pairs,
  width: number,
  height: number,
  activeAspect: number,
  minScale = 0.8,
): { rect: Rect; score: number } {
  const rectScore = rectScorer(pairs, width);
  // An aspect far from the original's means the leak was stretched, not cropped: keep the whole frame's.
  const uniform = Math.abs(activeAspect / (height / width) - 1) < 0.06;
  const centred = (s: number, cx: number, cy: number): Rect => {
    const w = s * width;
    const h = uniform ? w * activeAspect : s * height;
    return { x: cx - w / 2, y: cy - h / 2, w, h };
  };
  const fits = (r: Rect) => r.w <= width + 1e-6 && r.h <= height + 1e-6 && r.x >= -1e-6 && r.y >= -1e-6 && r.x + r.w <= width + 1e-6 && r.y + r.h <= height + 1e-6;
  const px = width / (pairs[0]?.original.width ?? 160);
  const whole = { x: 0, y: 0, w: width, h: height };
  const wholeFits = fits(whole) && Math.abs(activeAspect / (height / width) - 1) < 0.01;

  // Most leaks are only re-encoded or scaled, not cropped. When the untouched frame matches well
  // and none of the fine search's first moves away from it (a half-percent smaller, shifted by up
  // to a search pixel) scores higher, it is the answer and the search over every rectangle (a
  // second or two) is skipped; a crop, even of 1%, makes a smaller rectangle score higher, and
  // then the search decides (where the untouched frame may still win a tie).
  if (wholeFits) {
    const score = rectScore(whole, 1);
    const shifts = [-px, 0, px];
    const nearer = shifts.flatMap((dy) => shifts.map((dx) => centred(1 - 0.005, width / 2 + dx, height / 2 + dy)));
    if (score >= WHOLE_FRAME_MATCH && nearer.every((r) => !fits(r) || rectScore(r, 1) < score)) return { rect: whole, score };
  }

  let coarse: { rect: Rect; score: number } = { rect: centred(1, width / 2, height / 2), score: -2 };
  for (let s = 1; s >= minScale - 1e-9; s -= 0.01) {
    const r0 = centred(s, 0, 0);
    const xs = [(width - r0.w) / 2];
    const ys = [(height - r0.h) / 2];
    for (let x = 0; x + r0.w <= width + 1e-6; x += 2 * px) xs.push(x);
    for (let y = 0; y + r0.h <= height + 1e-6; y += 2 * px) ys.push(y);
    for (const y of ys) {
      for (const x of xs) {
        const r = { x, y, w: r0.w, h: r0.h };
        if (!fits(r)) continue;
        const score = rectScore(r, 4);
        if (score > coarse.score) coarse = { rect: r, score };
      }
    }
  }

  let best = { rect: coarse.rect, score: rectScore(coarse.rect, 1) };
  for (let delta = px, ds = 0.005, moves = 0; delta > px / 16; moves++) {
    const c = best.rect;
    const s0 = c.w / width;
    const cx = c.x + c.w / 2;
    const cy = c.y + c.h / 2;
    for (const s of [s0 - ds, s0, s0 + ds]) {
      for (const dy of [-delta, 0, delta]) {
        for (const dx of [-delta, 0, delta]) {
          if (s === s0 && dx === 0 && dy === 0) continue;
          const r = centred(s, cx + dx, cy + dy);
          if (!fits(r)) continue;
          const score = rectScore(r, 1);
          if (score > best.score) best = { rect: r, score };
        }
      }
    }
    // Stay at this step while it still improves (a few moves at most), then halve it.
    if (best.rect === c || moves >= 3) {
      delta /= 2;
      ds /= 2;
      moves = -1;
    }
  }
  // The untouched frame, when it scores as well, is the answer: a leak is far more often only
  // re-encoded or scaled than cropped, and a sub-pixel fit to coding noise would misplace it.
  if (wholeFits) {
    const score = rectScore(whole, 1);
    if (score >= best.score - TIE) return { rect: whole, score };
  }
  return best;
}
