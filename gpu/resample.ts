import { type ColumnMap, variantsKernel } from './wasm/variants.js';

/**
 * The video mark is computed on the luma reduced by an integer factor (the scales it lives in
 * survive downscaling, and the transform costs 1/factor² as much) and its change is brought back
 * to full size. Sizes that do not divide: the reduced frame is floor(size / factor), and the last
 * few full-size rows or columns take the nearest reduced value.
 */
export function reducedSize(width: number, height: number, factor: number): { width: number; height: number } {
  if (!Number.isInteger(factor) || factor < 1) throw new RangeError(`invalid resampling factor ${factor}`);
  return { width: Math.max(1, Math.floor(width / factor)), height: Math.max(1, Math.floor(height / factor)) };
}

/** factor × factor box average of 8-bit luma into floats. */
export function downsample(luma: Uint8Array, width: number, height: number, factor: number): Float32Array {
  if (factor === 4 && width % 4 === 0 && luma.byteOffset % 4 === 0 && width >= 4 && height >= 4)
    return downsample4(luma, width, height);
  const r = reducedSize(width, height, factor);
  const out = new Float32Array(r.width * r.height);
  const columns = Math.min(width, r.width * factor);
  const scale = 1 / (factor * factor);
  for (let i = 0; i < r.height; i++) {
    const o = i * r.width;
    for (let y = i * factor; y < Math.min(height, (i + 1) * factor); y++) {
      const row = y * width;
      // Sum the row's runs of `factor` pixels; the inner loop stays on contiguous memory.
      for (let x = 0, j = o; x < columns; j++) {
        let s = 0;
        for (const end = x + factor; x < end; x++) s += luma[row + x] as number;
        out[j] = (out[j] as number) + s;
      }
    }
    for (let j = o; j < o + r.width; j++) out[j] = (out[j] as number) * scale;
  }
  return out;
}

/**
 * The 4× case, which every frame of every marked film goes through, four pixels per read: a
 * 32-bit word holds a box row's four bytes, and masking splits them into two 16-bit lanes that
 * add without carrying into each other (a lane sums at most 8 × 255). Rows start on whole words
 * because the width divides by 4.
 */
function downsample4(luma: Uint8Array, width: number, height: number): Float32Array {
  const rw = width >> 2;
  const rh = height >> 2;
  const out = new Float32Array(rw * rh);
  const words = new Uint32Array(luma.buffer, luma.byteOffset, (width * height) >> 2);
  const m = 0x00ff00ff;
  for (let i = 0; i < rh; i++) {
    const r0 = 4 * i * rw;
    const r1 = r0 + rw;
    const r2 = r1 + rw;
    const r3 = r2 + rw;
    const o = i * rw;
    for (let j = 0; j < rw; j++) {
      const a = words[r0 + j] as number;
      const b = words[r1 + j] as number;
      const c = words[r2 + j] as number;
      const d = words[r3 + j] as number;
      const s =
        (a & m) + ((a >>> 8) & m) + (b & m) + ((b >>> 8) & m) + (c & m) + ((c >>> 8) & m) + (d & m) + ((d >>> 8) & m);
      out[o + j] = ((s & 0xffff) + (s >>> 16)) * 0.0625;
    }
  }
  return out;
}

/** For each full-size position, the two reduced neighbours and the weight of the second. */
function axisMap(full: number, reduced: number, factor: number): ColumnMap {
  const lo = new Int32Array(full);
  const hi = new Int32Array(full);
  const t = new Float32Array(full);
  for (let x = 0; x < full; x++) {
    // Pixel centres: full x sits at reduced coordinate (x + 0.5) / factor − 0.5 (the box's centre).
    const u = (x + 0.5) / factor - 0.5;
    const i = Math.floor(u);
    lo[x] = Math.min(reduced - 1, Math.max(0, i));
    hi[x] = Math.min(reduced - 1, Math.max(0, i + 1));
    t[x] = u - i;
  }
  return { lo, hi, t };
}

/** Where the rows of an enlargement live and what widens a reduced row into one of them. */
interface RowWidener {
  rows: [Float32Array, Float32Array];
  widen(i: number, into: Float32Array): void;
}

/** Widening in JavaScript, into rows of its own. */
function jsWidener(plane: Float32Array, width: number, reducedWidth: number, cols: ColumnMap): RowWidener {
  const { lo, hi, t } = cols;
  return {
    rows: [new Float32Array(width), new Float32Array(width)],
    widen(i, into) {
      const o = i * reducedWidth;
      for (let x = 0; x < width; x++) {
        const fx = t[x] as number;
        into[x] = (plane[o + (lo[x] as number)] as number) * (1 - fx) + (plane[o + (hi[x] as number)] as number) * fx;
      }
    },
  };
}

/**
 * The bilinear enlargement of a reduced plane, one full-size row at a time: row y is
 * top + (bottom − top)·fy, from two reduced rows widened to full width. Each reduced row is
 * widened once and rows are asked for top to bottom, so a pixel costs two multiply-adds in the
 * caller's own loop and the enlarged plane never exists as a whole.
 */
class EnlargedRows {
  top: Float32Array;
  bottom: Float32Array;
  fy = 0;
  private topIndex = -1;
  private bottomIndex = -1;
  private readonly rows: ColumnMap;

  constructor(
    height: number,
    reducedHeight: number,
    factor: number,
    private readonly widener: RowWidener,
  ) {
    this.rows = axisMap(height, reducedHeight, factor);
    [this.top, this.bottom] = widener.rows;
  }

  /** Moves to full-size row y (y must not decrease): sets top, bottom and fy. */
  at(y: number): void {
    const lo = this.rows.lo[y] as number;
    const hi = this.rows.hi[y] as number;
    if (this.topIndex !== lo) {
      if (this.bottomIndex === lo) {
        [this.top, this.bottom] = [this.bottom, this.top];
        this.bottomIndex = -1;
      } else this.widener.widen(lo, this.top);
      this.topIndex = lo;
    }
    if (this.bottomIndex !== hi) {
      this.widener.widen(hi, this.bottom);
      this.bottomIndex = hi;
    }
    this.fy = this.rows.t[y] as number;
  }
}

/** Bilinear enlargement of a reduced plane to width × height. */
export function upsample(plane: Float32Array, width: number, height: number, factor: number): Float32Array {
  const out = new Float32Array(width * height);
  const r = reducedSize(width, height, factor);
  const rows = new EnlargedRows(
    height,
    r.height,
    factor,
    jsWidener(plane, width, r.width, axisMap(width, r.width, factor)),
  );
  for (let y = 0; y < height; y++) {
    rows.at(y);
    const { top, bottom, fy } = rows;
    const o = y * width;
    for (let x = 0; x < width; x++) out[o + x] = (top[x] as number) * (1 - fy) + (bottom[x] as number) * fy;
  }
  return out;
}

export interface VariantTargets {
  /** receives luma + δ */
  a?: Uint8Array;
  /** receives luma − δ */
  b?: Uint8Array;
}

/**
 * Writes the variants of a frame from its reduced change δ: A = luma + δ, B = luma − δ, each
 * rounded and clipped to 8 bits, in one pass that enlarges δ as it goes. A target may be the
 * luma itself (the luma is copied into the kernel's memory first). The pixel loop is SIMD
 * WebAssembly (wasm/variants.wat): it runs for every pixel of every frame of every marked film,
 * and in JavaScript it was the largest single cost of watermarked ingest.
 */
export function writeVariants(
  luma: Uint8Array,
  delta: Float32Array,
  width: number,
  height: number,
  factor: number,
  targets: VariantTargets,
): void {
  const r = reducedSize(width, height, factor);
  const kernel = variantsKernel(width, height, r.width, r.height);
  kernel.luma.set(luma.subarray(0, width * height));
  kernel.load(delta, axisMap(width, r.width, factor));
  const rows = new EnlargedRows(height, r.height, factor, kernel);
  for (let y = 0; y < height; y++) {
    rows.at(y);
    kernel.row(y, rows.top, rows.bottom, rows.fy);
  }
  if (targets.a) targets.a.set(kernel.a);
  if (targets.b) targets.b.set(kernel.b);
}
