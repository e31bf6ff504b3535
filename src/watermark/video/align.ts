import type { Rect } from './geometry.js';

/**
 * Time alignment and tone of a leak against its original, on small grey thumbnails: every frame of
 * the original, and of the leak a sample every few frames (the frames the detector can score),
 * each at its own time counted in original frames (`positions`: a leak at another frame rate, or
 * whose samples are its P-frames at uneven intervals, is placed where its pictures really are).
 *
 * A frame's signature is its central region (inside any letterbox, and mostly inside a crop) as a
 * grid of block means, zero-mean and unit-norm. The leak's offset is the one whose signatures
 * correlate best on average; then every leak frame picks the best original frame within a few
 * frames of that offset, which absorbs dropped and repeated frames and a different frame rate.
 */
export const SIG_COLS = 8;
export const SIG_ROWS = 6;

/**
 * The signature of a thumbnail's region (x, y, w, h in thumbnail pixels). NaN pixels (what a
 * turned or tilted leak does not show, ./homography.ts) are left out of their block's mean.
 */
export function signature(data: ArrayLike<number>, width: number, region: Rect): Float32Array {
  const out = new Float32Array(SIG_COLS * SIG_ROWS);
  for (let r = 0; r < SIG_ROWS; r++) {
    const y0 = Math.floor(region.y + (r * region.h) / SIG_ROWS);
    const y1 = Math.max(y0 + 1, Math.floor(region.y + ((r + 1) * region.h) / SIG_ROWS));
    for (let c = 0; c < SIG_COLS; c++) {
      const x0 = Math.floor(region.x + (c * region.w) / SIG_COLS);
      const x1 = Math.max(x0 + 1, Math.floor(region.x + ((c + 1) * region.w) / SIG_COLS));
      let sum = 0;
      let count = 0;
      for (let y = y0; y < y1; y++) {
        for (let x = x0; x < x1; x++) {
          const v = data[y * width + x] as number;
          if (Number.isNaN(v)) continue;
          sum += v;
          count++;
        }
      }
      out[r * SIG_COLS + c] = count > 0 ? sum / count : 0;
    }
  }
  let mean = 0;
  for (const v of out) mean += v;
  mean /= out.length;
  let norm = 0;
  for (let i = 0; i < out.length; i++) {
    out[i] = (out[i] as number) - mean;
    norm += (out[i] as number) ** 2;
  }
  // A flat frame (black, a fade) has no shape to match: it stays all zeros and scores 0 everywhere.
  const k = norm > 1e-6 ? 1 / Math.sqrt(norm) : 0;
  for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) * k;
  return out;
}

/** The middle half of a rectangle: what a letterbox or a small crop leaves in every copy. */
export function centralRegion(r: Rect, share = 0.5): Rect {
  return { x: r.x + (r.w * (1 - share)) / 2, y: r.y + (r.h * (1 - share)) / 2, w: r.w * share, h: r.h * share };
}

export const dot = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
};

export interface TimeAlignment {
  /** original frame index for each leak sample, -1 where none matches */
  frameMap: Int32Array;
  /** each leak sample's time since the leak's first frame, in original frames (rounded) */
  positions: Int32Array;
  /** the leak's first frame is original frame `offset` (before per-frame refinement) */
  offset: number;
  /**
   * the original frame each sample is expected at before per-frame refinement: positions + offset,
   * except in pieces of the leak lined up on their own (./align-pieces.ts: reordered, dropped or
   * re-timed parts)
   */
  predicted: Int32Array;
  /** mean signature correlation at the offset: near 1 for the same picture, near 0 for another film */
  correlation: number;
}

function flat(signatures: readonly Float32Array[], size: number): Float32Array {
  const out = new Float32Array(signatures.length * size);
  for (const [k, sig] of signatures.entries()) out.set(sig, k * size);
  return out;
}

/** Leak sample positions in original frames, rounded; `times` in seconds from the leak's first frame. */
export function framePositions(times: ArrayLike<number>, fps: number): Int32Array {
  return Int32Array.from({ length: times.length }, (_, k) => Math.round((times[k] as number) * fps));
}

export function alignTime(
  leak: readonly Float32Array[],
  original: readonly Float32Array[],
  positions: Int32Array,
  slack = 3,
): TimeAlignment {
  const nl = leak.length;
  const no = original.length;
  const span = nl > 0 ? (positions[nl - 1] as number) + 1 : 0;
  // Every offset that leaves at least a quarter of the leak (or 2 s at 25 fps) overlapping.
  const minOverlap = Math.max(1, Math.min(50, Math.floor(span / 4)));
  const stride = Math.max(1, Math.floor(nl / 600));
  // Tens of thousands of offsets, each comparing hundreds of signatures: the signatures are laid
  // out end to end so that the inner loop runs over one array.
  const size = SIG_COLS * SIG_ROWS;
  const leakFlat = flat(leak, size);
  const origFlat = flat(original, size);
  let best = { offset: 0, correlation: -2 };
  // The first sample that falls inside the original at offset d (positions only grow).
  let first = nl;
  for (let d = -(span - minOverlap); d <= no - minOverlap; d++) {
    while (first > 0 && (positions[first - 1] as number) + d >= 0) first--;
    let sum = 0;
    let n = 0;
    for (let k = first; k < nl && (positions[k] as number) + d < no; k += stride) {
      const a = k * size;
      const b = ((positions[k] as number) + d) * size;
      let product = 0;
      for (let j = 0; j < size; j++) product += (leakFlat[a + j] as number) * (origFlat[b + j] as number);
      sum += product;
      n++;
    }
    if (n > 0 && sum / n > best.correlation) best = { offset: d, correlation: sum / n };
  }
  const predicted = positions.map((p) => p + best.offset);
  const frameMap = Int32Array.from(predicted, (at, k) => pickNear(leak[k] as Float32Array, original, at, slack));
  return { frameMap, positions, offset: best.offset, correlation: best.correlation, predicted };
}

/** The original frame within `slack` of `predicted` that a leak sample matches best, or -1 where none does. */
export function pickNear(
  sample: Float32Array,
  original: readonly Float32Array[],
  predicted: number,
  slack: number,
): number {
  let pick = -1;
  let score = 0.5; // below this the frame is not the original's (a fade, an inserted card)
  for (let i = Math.max(0, predicted - slack); i <= Math.min(original.length - 1, predicted + slack); i++) {
    // Ties (a still picture) go to the predicted frame.
    const s = dot(sample, original[i] as Float32Array) - 1e-4 * Math.abs(i - predicted);
    if (s > score) {
      score = s;
      pick = i;
    }
  }
  return pick;
}

/**
 * Black bars of a leak: rows and columns whose brightest value over the sampled thumbnails stays
 * near black. Returns the active area in thumbnail pixels.
 */
export function activeArea(frames: readonly Uint8Array[], width: number, height: number, black = 28): Rect {
  const rowMax = new Uint8Array(height);
  const colMax = new Uint8Array(width);
  for (const f of frames) {
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const v = f[y * width + x] as number;
        if (v > (rowMax[y] as number)) rowMax[y] = v;
        if (v > (colMax[x] as number)) colMax[x] = v;
      }
    }
  }
  let top = 0;
  while (top < height / 3 && (rowMax[top] as number) < black) top++;
  let bottom = height - 1;
  while (bottom > (2 * height) / 3 && (rowMax[bottom] as number) < black) bottom--;
  let left = 0;
  while (left < width / 3 && (colMax[left] as number) < black) left++;
  let right = width - 1;
  while (right > (2 * width) / 3 && (colMax[right] as number) < black) right--;
  return { x: left, y: top, w: right - left + 1, h: bottom - top + 1 };
}

/**
 * A tone curve from leak values to original values (undoes gamma, levels and contrast changes):
 * the mean original value for each leak value over matched pixels, filled where no pixel had
 * that value, and made non-decreasing.
 */
export function toneCurve(pairs: ReadonlyArray<{ leak: ArrayLike<number>; original: ArrayLike<number> }>): Uint8Array {
  const sum = new Float64Array(256);
  const count = new Float64Array(256);
  for (const { leak, original } of pairs) {
    for (let i = 0; i < leak.length; i++) {
      // NaN: a pixel the leak does not show (./homography.ts's warpedView).
      if (Number.isNaN(original[i] as number)) continue;
      const l = Math.round(leak[i] as number);
      sum[l] = (sum[l] as number) + (original[i] as number);
      count[l] = (count[l] as number) + 1;
    }
  }
  const curve = new Float64Array(256).fill(Number.NaN);
  for (let v = 0; v < 256; v++) if ((count[v] as number) >= 8) curve[v] = (sum[v] as number) / (count[v] as number);
  // Fill gaps by linear interpolation; the ends extend as identity offsets.
  const known = [...curve.keys()].filter((v) => !Number.isNaN(curve[v]));
  const lut = new Uint8Array(256);
  if (known.length < 2) {
    for (let v = 0; v < 256; v++) lut[v] = v;
    return lut;
  }
  let k = 0;
  let level = 0;
  for (let v = 0; v < 256; v++) {
    while (k < known.length - 1 && (known[k + 1] as number) <= v) k++;
    const a = known[k] as number;
    const b = known[Math.min(k + 1, known.length - 1)] as number;
    let value: number;
    if (v <= (known[0] as number)) value = (curve[known[0] as number] as number) + (v - (known[0] as number));
    else if (v >= (known[known.length - 1] as number))
      value = (curve[known[known.length - 1] as number] as number) + (v - (known[known.length - 1] as number));
    else
      value =
        b === a
          ? (curve[a] as number)
          : (curve[a] as number) + (((curve[b] as number) - (curve[a] as number)) * (v - a)) / (b - a);
    level = Math.max(level, value);
    lut[v] = Math.max(0, Math.min(255, Math.round(level)));
  }
  return lut;
}

/**
 * Sharpens a time alignment once the geometry is known, with a finer comparison (`score`: the
 * correlation of leak sample k with original frame i seen through the found rectangle). A slow
 * pan moves too little between frames for block signatures to tell neighbours apart; a few
 * frames' error there costs the detector half its score. First the offset (around the coarse
 * one, on up to 300 samples), then each sample within ±2 of it.
 */
export function refineTime(
  coarse: TimeAlignment,
  originalFrames: number,
  score: (k: number, i: number) => number,
  slack = 4,
): TimeAlignment {
  const { positions, predicted: anchors } = coarse;
  const ks = [...coarse.frameMap.keys()].filter((k) => (coarse.frameMap[k] as number) >= 0);
  const sample = ks.filter((_, n) => n % Math.max(1, Math.floor(ks.length / 300)) === 0);
  let best = { offset: coarse.offset, correlation: -2 };
  for (let d = coarse.offset - slack; d <= coarse.offset + slack; d++) {
    let sum = 0;
    let n = 0;
    for (const k of sample) {
      const i = (anchors[k] as number) + d - coarse.offset;
      if (i < 0 || i >= originalFrames) continue;
      sum += score(k, i);
      n++;
    }
    if (n > 0 && sum / n > best.correlation) best = { offset: d, correlation: sum / n };
  }
  const frameMap = new Int32Array(coarse.frameMap.length).fill(-1);
  const fits = new Float64Array(coarse.frameMap.length);
  for (const k of ks) {
    const predicted = (anchors[k] as number) + best.offset - coarse.offset;
    let top = -2;
    for (let i = Math.max(0, predicted - 2); i <= Math.min(originalFrames - 1, predicted + 2); i++) {
      const s = score(k, i) - 1e-4 * Math.abs(i - predicted);
      if (s > top) {
        top = s;
        frameMap[k] = i;
      }
    }
    fits[k] = top;
  }
  dropMisfits(frameMap, fits, ks);
  const predicted = anchors.map((a) => a + best.offset - coarse.offset);
  return { frameMap, positions, offset: best.offset, correlation: best.correlation, predicted };
}

/**
 * A sample whose best frame matches it clearly worse than the leak's samples typically do shows
 * something else: most often the other side of a pirate's cut, where a piece of ./align-pieces.ts
 * spanning the cut was placed by its larger part. Scored, such a frame is another picture, whose
 * difference from the original swamps the segment's mark (measured: two segments of a copy in
 * reverse order read |z| 3.8 and 4.3 with them, 13–15 without). It is left unmatched.
 */
const MISFIT = 0.1;

function dropMisfits(frameMap: Int32Array, fits: Float64Array, ks: readonly number[]): void {
  const sorted = ks.map((k) => fits[k] as number).sort((a, b) => a - b);
  const typical = sorted[sorted.length >> 1] ?? 0;
  for (const k of ks) if ((fits[k] as number) < typical - MISFIT) frameMap[k] = -1;
}
