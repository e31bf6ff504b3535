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
  if (factor === 4 && width % 4 === 0 && luma.byteOffset % 4 === 0 && width >= 4 && height >= 4) return downsample4(luma, width, height);
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
      const s = (a & m) + ((a >>> 8) & m) + (b & m) + ((b >>> 8) & m) + (c & m) + ((c >>> 8) & m) + (d & m) + ((d >>> 8) & m);
      out[o + j] = ((s & 0xffff) + (s >>> 16)) * 0.0625;
    }
  }
  return out;
}

/** For each full-size position, the two reduced neighbours and the weight of the second. */
function axisMap(full: number, reduced: number, factor: number): { lo: Int32Array; hi: Int32Array; t: Float32Array } {
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
  private readonly reduced: { width: number; height: number };
  private readonly cols: ReturnType<typeof axisMap>;
  private readonly rows: ReturnType<typeof axisMap>;

  constructor(
    private readonly plane: Float32Array,
    private readonly width: number,
    height: number,
    factor: number,
  ) {
    this.reduced = reducedSize(width, height, factor);
    this.cols = axisMap(width, this.reduced.width, factor);
    this.rows = axisMap(height, this.reduced.height, factor);
    this.top = new Float32Array(width);
    this.bottom = new Float32Array(width);
  }

  /** Moves to full-size row y (y must not decrease): sets top, bottom and fy. */
  at(y: number): void {
    const lo = this.rows.lo[y] as number;
    const hi = this.rows.hi[y] as number;
    if (this.topIndex !== lo) {
      if (this.bottomIndex === lo) {
        [this.top, this.bottom] = [this.bottom, this.top];
        this.bottomIndex = -1;
      } else this.widen(lo, this.top);
      this.topIndex = lo;
    }
    if (this.bottomIndex !== hi) {
      this.widen(hi, this.bottom);
      this.bottomIndex = hi;
    }
    this.fy = this.rows.t[y] as number;
  }

  private widen(i: number, into: Float32Array): void {
    const { lo, hi, t } = this.cols;
    const plane = this.plane;
    const o = i * this.reduced.width;
    for (let x = 0; x < this.width; x++) {
      const fx = t[x] as number;
      into[x] = (plane[o + (lo[x] as number)] as number) * (1 - fx) + (plane[o + (hi[x] as number)] as number) * fx;
    }
  }
}

/** Bilinear enlargement of a reduced plane to width × height. */
export function upsample(plane: Float32Array, width: number, height: number, factor: number): Float32Array {
  const out = new Float32Array(width * height);
  const rows = new EnlargedRows(plane, width, height, factor);
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
 * luma itself (the pixel is read before it is written).
 */
export function writeVariants(luma: Uint8Array, delta: Float32Array, width: number, height: number, factor: number, targets: VariantTargets): void {
  // Uint8ClampedArray stores round-half-even and clips to 0..255: the conversion costs no code.
  const clamped = (t: Uint8Array) => new Uint8ClampedArray(t.buffer, t.byteOffset, width * height);
  const rows = new EnlargedRows(delta, width, height, factor);
  if (targets.a && targets.b) writeBoth(luma, rows, width, height, clamped(targets.a), clamped(targets.b));
  else if (targets.a) writeOne(luma, rows, width, height, clamped(targets.a), 1);
  else if (targets.b) writeOne(luma, rows, width, height, clamped(targets.b), -1);
}

// One function per case, with no test inside the loops: they run for every pixel of every frame.
function writeBoth(luma: Uint8Array, rows: EnlargedRows, width: number, height: number, a: Uint8ClampedArray, b: Uint8ClampedArray): void {
  for (let y = 0; y < height; y++) {
    rows.at(y);
    const { top, bottom, fy } = rows;
    const gy = 1 - fy;
    const o = y * width;
    for (let x = 0; x < width; x++) {
      const d = (top[x] as number) * gy + (bottom[x] as number) * fy;
      const v = luma[o + x] as number;
      a[o + x] = v + d;
      b[o + x] = v - d;
    }
  }
}

function writeOne(luma: Uint8Array, rows: EnlargedRows, width: number, height: number, out: Uint8ClampedArray, sign: number): void {
  for (let y = 0; y < height; y++) {
    rows.at(y);
    const gy = sign * (1 - rows.fy);
    const fy = sign * rows.fy;
    const { top, bottom } = rows;
    const o = y * width;
    for (let x = 0; x < width; x++) out[o + x] = (luma[o + x] as number) + (top[x] as number) * gy + (bottom[x] as number) * fy;
  }
}
