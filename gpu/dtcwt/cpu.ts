/**
 * CPU reference implementation of the 2-D dual-tree complex wavelet transform, a port of python
 * dtcwt 0.12's `dtcwt.numpy.Transform2d` (forward and inverse). Other backends are checked
 * against this one, and this one is checked against python's own output (fixtures/dtcwt).
 *
 * Generic over the element type: Float64Array is the reference; a Float32Array image runs the
 * same code with f32 storage (sums are still formed in f64 JS numbers, then rounded on store).
 */
import { type DtcwtFilters, dtcwtFilters } from './filters.js';
import { allocLike, coldfilt, colfilter, colifilt, type FloatArray, type Plane, zerosLike } from './lowlevel.js';
import { addPlanes, c2q, type Highpass, ORIENTATIONS, q2c, transpose } from './quads.js';
import { wasmPlanes } from '../wasm/rows.js';

export type { FloatArray, Plane } from './lowlevel.js';
export type { Highpass } from './quads.js';

/** A forward transform: the coarsest lowpass plus one complex highpass level per level (finest first). */
export interface Dtcwt2d<T extends FloatArray = Float64Array> {
  lowpass: Plane<T>;
  highpasses: Highpass<T>[];
  /** Size of the image that was transformed, so inverse2d can drop python's odd-size padding. */
  height: number;
  width: number;
}

/**
 * Copies x with its edge rows/columns repeated: `top`/`bottom` extra rows, `left`/`right` extra
 * columns. Python dtcwt pads this way (odd sizes once up front, sizes not divisible by 4 before
 * every q-shift level) so coldfilt always sees a multiple of 4.
 */
function extendEdges<T extends FloatArray>(
  x: Plane<T>,
  top: number,
  bottom: number,
  left: number,
  right: number,
): Plane<T> {
  const rows = x.rows + top + bottom;
  const cols = x.cols + left + right;
  const y = zerosLike(x, rows, cols);
  for (let i = 0; i < rows; i++) {
    const src = Math.min(Math.max(i - top, 0), x.rows - 1) * x.cols;
    const dst = i * cols;
    // The row as it is, then its first and last values repeated into the margins.
    y.data.set(x.data.subarray(src, src + x.cols), dst + left);
    y.data.fill(x.data[src] as number, dst, dst + left);
    y.data.fill(x.data[src + x.cols - 1] as number, dst + left + x.cols, dst + cols);
  }
  return y;
}

function crop<T extends FloatArray>(x: Plane<T>, top: number, rows: number, left: number, cols: number): Plane<T> {
  const y = zerosLike(x, rows, cols);
  for (let i = 0; i < rows; i++) {
    const start = (i + top) * x.cols + left;
    y.data.set(x.data.subarray(start, start + cols), i * cols);
  }
  return y;
}

function isZero(a: FloatArray): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== 0) return false;
  return true;
}

function mapOrNull<T extends FloatArray>(x: Plane<T> | null, f: (x: Plane<T>) => Plane<T>): Plane<T> | null {
  return x ? f(x) : null;
}

function sumOf<T extends FloatArray>(a: Plane<T> | null, b: Plane<T> | null): Plane<T> | null {
  return a && b ? addPlanes(a, b) : (a ?? b);
}

function newHighpass<T extends FloatArray>(like: Plane<T>): Highpass<T> {
  const rows = like.rows >> 1;
  const cols = like.cols >> 1;
  const n = rows * cols * ORIENTATIONS;
  return { re: allocLike(like.data, n), im: allocLike(like.data, n), rows, cols };
}

/**
 * f32 transforms run on planes in WebAssembly memory, where the row filters and transposes are
 * wasm loops (../wasm/rows.ts); f64 (the reference checked against python) stays in JavaScript.
 * `run` gets a copy of `data` in that memory and works there; its result is copied out. A run
 * that outgrew the arena is done again in a larger one, so that every f32 result comes from the
 * same code whatever ran on this thread before (the pool's results match the direct ones bit
 * for bit).
 */
function inWasm<R>(data: Float32Array, pixels: number, run: (data: Float32Array) => R, copyOut: (r: R) => R): R {
  const planes = wasmPlanes();
  for (;;) {
    planes.reset(pixels);
    const result = run(planes.copyIn(data));
    if (!planes.overflowed) return copyOut(result);
  }
}

const outsideWasm = (data: FloatArray): data is Float32Array =>
  data instanceof Float32Array && !wasmPlanes().owns(data);

function copyTransform<T extends FloatArray>(t: Dtcwt2d<T>): Dtcwt2d<T> {
  return {
    ...t,
    lowpass: { ...t.lowpass, data: t.lowpass.data.slice() as T },
    highpasses: t.highpasses.map((h) => ({ ...h, re: h.re.slice() as T, im: h.im.slice() as T })),
  };
}

/**
 * The checks forward2d makes of its arguments, exported so that the tfjs backend rejects the
 * same inputs with the same messages: every backend fails alike.
 */
export function checkForwardInput(
  image: FloatArray,
  height: number,
  width: number,
  levels: number,
  firstHighpass: number,
): void {
  if (!Number.isInteger(height) || !Number.isInteger(width) || height < 1 || width < 1) {
    throw new RangeError(`forward2d: invalid size ${height}x${width}`);
  }
  if (image.length !== height * width) throw new RangeError('forward2d: image length does not match its size');
  if (!Number.isInteger(levels) || levels < 0) throw new RangeError(`forward2d: invalid level count ${levels}`);
  if (!Number.isInteger(firstHighpass) || firstHighpass < 1)
    throw new RangeError(`forward2d: invalid first highpass level ${firstHighpass}`);
}

/**
 * Forward 2-D DTCWT of a row-major `height` x `width` image over `levels` levels. Level 1 uses the
 * biort filters without decimation of the lowpass; levels >= 2 use the q-shift filters.
 * Orientation pairs: horizontal (15, 165), vertical (75, 105), diagonal (45, 135).
 *
 * `firstHighpass`: highpasses of the levels before it are not computed and come back as zeros.
 * The video mark uses only middle levels, and level 1's three highpasses are most of the work.
 */
export function forward2d<T extends FloatArray>(
  image: T,
  height: number,
  width: number,
  levels: number,
  filters: DtcwtFilters = dtcwtFilters(),
  firstHighpass = 1,
): Dtcwt2d<T> {
  checkForwardInput(image, height, width, levels, firstHighpass);
  if (outsideWasm(image)) {
    return inWasm(
      image,
      height * width,
      (copy) => forward2d(copy as T, height, width, levels, filters, firstHighpass),
      copyTransform,
    );
  }
  const { h0o, h1o } = filters.biort;
  const { h0a, h0b, h1a, h1b } = filters.qshift;

  // Odd sizes: python repeats the bottom row / right column once before anything else.
  let x: Plane<T> = { data: image, rows: height, cols: width };
  if (height % 2 !== 0 || width % 2 !== 0) x = extendEdges(x, 0, height % 2, 0, width % 2);
  if (levels === 0) return { lowpass: extendEdges(x, 0, 0, 0, 0), highpasses: [], height, width };

  const highpasses: Highpass<T>[] = [];
  // Level 1: odd filters on columns, then (after transposing) on rows.
  let lo = transpose(colfilter(x, h0o));
  let lolo = transpose(colfilter(lo, h0o));
  let hp = newHighpass(lolo);
  if (firstHighpass <= 1) {
    const hi = transpose(colfilter(x, h1o));
    q2c(transpose(colfilter(hi, h0o)), hp, 0, 5); // horizontal pair
    q2c(transpose(colfilter(lo, h1o)), hp, 2, 3); // vertical pair
    q2c(transpose(colfilter(hi, h1o)), hp, 1, 4); // diagonal pair
  }
  highpasses.push(hp);

  for (let level = 2; level <= levels; level++) {
    // coldfilt needs a multiple of 4: extend by one repeated row/column at both ends.
    const padRows = lolo.rows % 4 !== 0 ? 1 : 0;
    const padCols = lolo.cols % 4 !== 0 ? 1 : 0;
    if (padRows || padCols) lolo = extendEdges(lolo, padRows, padRows, padCols, padCols);

    const input = lolo;
    lo = transpose(coldfilt(input, h0b, h0a));
    lolo = transpose(coldfilt(lo, h0b, h0a));
    hp = newHighpass(lolo);
    if (level >= firstHighpass) {
      const hi = transpose(coldfilt(input, h1b, h1a));
      q2c(transpose(coldfilt(hi, h0b, h0a)), hp, 0, 5);
      q2c(transpose(coldfilt(lo, h1b, h1a)), hp, 2, 3);
      q2c(transpose(coldfilt(hi, h1b, h1a)), hp, 1, 4);
    }
    highpasses.push(hp);
  }
  return { lowpass: lolo, highpasses, height, width };
}

/**
 * Inverse 2-D DTCWT: rebuilds the `height` x `width` image from a forward2d result (possibly with
 * modified coefficients). Python's inverse returns the padded size for odd inputs; this one crops
 * the padding so that inverse2d(forward2d(x)) has the shape of x.
 */
export function inverse2d<T extends FloatArray>(transform: Dtcwt2d<T>, filters: DtcwtFilters = dtcwtFilters()): T {
  const { highpasses, height, width } = transform;
  const low = transform.lowpass.data;
  if (outsideWasm(low)) {
    return inWasm(
      low,
      height * width,
      (copy) => inverse2d({ ...transform, lowpass: { ...transform.lowpass, data: copy as T } }, filters),
      (image) => image.slice() as T,
    );
  }
  const { g0o, g1o } = filters.biort;
  const { g0a, g0b, g1a, g1b } = filters.qshift;
  const like = transform.lowpass;
  // An all-zero plane is null: filtering it gives zeros, so skipping it is exact. The video mark
  // inverts a transform with a zero lowpass and zero fine levels, where this saves most of the work.
  let z: Plane<T> | null = isZero(like.data) ? null : like;
  let zRows = like.rows;
  let zCols = like.cols;

  /** One synthesis step: columns, then rows, of y1 = lo(z) + hi(lh), y2 = lo(hl) + hi(hh). */
  const synthesise = (hp: Highpass<T>, lo: (x: Plane<T>) => Plane<T>, hi: (x: Plane<T>) => Plane<T>) => {
    const zeroHp = isZero(hp.re) && isZero(hp.im);
    const quad = (o1: number, o2: number) => (zeroHp ? null : c2q(hp, o1, o2, like));
    const y1 = sumOf(z && lo(z), mapOrNull(quad(0, 5), hi));
    const y2 = sumOf(mapOrNull(quad(2, 3), lo), mapOrNull(quad(1, 4), hi));
    const out = sumOf(
      mapOrNull(y1, (y) => lo(transpose(y))),
      mapOrNull(y2, (y) => hi(transpose(y))),
    );
    return out && transpose(out);
  };

  for (let level = highpasses.length; level >= 2; level--) {
    const hp = highpasses[level - 1] as Highpass<T>;
    if (hp.rows * 2 !== zRows || hp.cols * 2 !== zCols)
      throw new RangeError('inverse2d: highpass sizes are not consistent');
    // Even q-shift filters on columns, then on rows; each step doubles both sizes.
    z = synthesise(
      hp,
      (x) => colifilt(x, g0b, g0a),
      (x) => colifilt(x, g1b, g1a),
    );
    zRows *= 2;
    zCols *= 2;

    // Undo the forward pass's divisible-by-4 padding: the result must be twice the next level up.
    const next = highpasses[level - 2] as Highpass<T>;
    const rows = 2 * next.rows;
    const cols = 2 * next.cols;
    const cropRows = zRows !== rows ? 1 : 0;
    const cropCols = zCols !== cols ? 1 : 0;
    if (z && (cropRows || cropCols)) z = crop(z, cropRows, z.rows - 2 * cropRows, cropCols, z.cols - 2 * cropCols);
    zRows -= 2 * cropRows;
    zCols -= 2 * cropCols;
    if (zRows !== rows || zCols !== cols) throw new RangeError('inverse2d: highpass sizes are not consistent');
  }

  const first = highpasses[0];
  if (first) {
    if (first.rows * 2 !== zRows || first.cols * 2 !== zCols)
      throw new RangeError('inverse2d: highpass sizes are not consistent');
    // Odd top-level filters on columns, then on rows; the size stays.
    z = synthesise(
      first,
      (x) => colfilter(x, g0o),
      (x) => colfilter(x, g1o),
    );
  }
  if (!z) z = zerosLike(like, zRows, zCols);
  if (z.rows !== height || z.cols !== width) z = crop(z, 0, height, 0, width);
  return z.data;
}
