/**
 * The column filters of python dtcwt (dtcwt/numpy/lowlevel.py): colfilter, coldfilt, colifilt.
 *
 * Images are row-major, so "filtering the columns" combines whole rows: every output row is a
 * weighted sum of a few input rows, and the inner loop runs over contiguous memory. The 2-D
 * transform filters the other axis by transposing, exactly as the python code does with `.T`.
 *
 * Every index expression below is the python one (xe, t, ta, tb, 'valid' convolution) unrolled,
 * so boundary handling (symmetric extension with repeated end samples) matches bit for bit up to
 * floating point summation order.
 */

import { wasmPlanes } from '../wasm/rows.js';

export type FloatArray = Float32Array | Float64Array;

/** A row-major 2-D array of `rows` x `cols` values. */
export interface Plane<T extends FloatArray = Float64Array> {
  data: T;
  rows: number;
  cols: number;
}

type Filter = ArrayLike<number>;

/**
 * A zeroed array of the same element type as `like`, so one code path serves f32 and f64. A plane
 * in WebAssembly memory (../wasm/rows.ts) gets its companions there too, so the whole transform
 * stays where the wasm loops can reach it.
 */
export function allocLike<T extends FloatArray>(like: T, length: number): T {
  const planes = wasmPlanes();
  if (planes.owns(like)) return planes.alloc(length) as T;
  return new (like.constructor as new (n: number) => T)(length);
}

export function zerosLike<T extends FloatArray>(like: Plane<T>, rows: number, cols: number): Plane<T> {
  return { data: allocLike(like.data, rows * cols), rows, cols };
}

/**
 * dtcwt.utils.reflect(i, -0.5, n - 0.5): symmetric extension about the half-sample points, so
 * the end samples repeat (... 1 0 | 0 1 ... n-1 | n-1 n-2 ...). Periodic with period 2n, which
 * keeps it correct even when the filter is longer than the signal.
 */
export function reflectIndex(i: number, n: number): number {
  const period = 2 * n;
  let m = i % period;
  if (m < 0) m += period;
  return m >= n ? period - 1 - m : m;
}

/**
 * y[yRow, :] = Σ_k coeffs[k] · x[rows[k], :] — the one place that touches typed arrays in the hot
 * loops. Taps go four at a time, so the output row is written once per four taps rather than
 * once per tap (the rows are short enough to stay in cache; the stores were the cost).
 */
function sumRows<T extends FloatArray>(
  y: Plane<T>,
  yRow: number,
  x: Plane<T>,
  rows: readonly number[],
  coeffs: readonly number[],
): void {
  const n = x.cols;
  const planes = wasmPlanes();
  if (planes.owns(y.data) && planes.owns(x.data)) {
    planes.sumRows(y.data as Float32Array, yRow * n, x.data as Float32Array, rows, coeffs, n);
    return;
  }
  const yd = y.data;
  const xd = x.data;
  const yo = yRow * n;
  let k = 0;
  for (; k + 4 <= rows.length; k += 4) {
    const o0 = (rows[k] as number) * n;
    const o1 = (rows[k + 1] as number) * n;
    const o2 = (rows[k + 2] as number) * n;
    const o3 = (rows[k + 3] as number) * n;
    const a0 = coeffs[k] as number;
    const a1 = coeffs[k + 1] as number;
    const a2 = coeffs[k + 2] as number;
    const a3 = coeffs[k + 3] as number;
    const first = k === 0;
    for (let j = 0; j < n; j++) {
      const s =
        a0 * (xd[o0 + j] as number) +
        a1 * (xd[o1 + j] as number) +
        a2 * (xd[o2 + j] as number) +
        a3 * (xd[o3 + j] as number);
      yd[yo + j] = first ? s : (yd[yo + j] as number) + s;
    }
  }
  for (; k < rows.length; k++) {
    const o = (rows[k] as number) * n;
    const a = coeffs[k] as number;
    const first = k === 0;
    for (let j = 0; j < n; j++) yd[yo + j] = (first ? 0 : (yd[yo + j] as number)) + a * (xd[o + j] as number);
  }
}

function tap(h: Filter, k: number): number {
  return h[k] as number;
}

function dot(a: Filter, b: Filter): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += tap(a, i) * tap(b, i);
  return s;
}

/**
 * Filters the columns of x with h, no decimation. Odd-length h keeps the size (each output aligned
 * with its input sample); even-length h gives one more row (outputs between input pairs).
 */
export function colfilter<T extends FloatArray>(x: Plane<T>, h: Filter): Plane<T> {
  const r = x.rows;
  const m = h.length;
  const m2 = Math.trunc(m / 2);
  const outRows = r + 2 * m2 - m + 1;
  const y = zerosLike(x, outRows, x.cols);
  // 'valid' convolution of X[xe] with h: Y[i] = sum_k h[k] X[xe[i + m - 1 - k]], xe[j] = refl(j - m2).
  const coeffs = Array.from(h);
  const rows = new Array<number>(m);
  for (let i = 0; i < outRows; i++) {
    for (let k = 0; k < m; k++) rows[k] = reflectIndex(i + m - 1 - k - m2, r);
    sumRows(y, i, x, rows, coeffs);
  }
  return y;
}

/**
 * Filters the columns of x with the q-shift pair ha (odd output samples) and hb = reverse(ha)
 * (even output samples) and decimates by two. Rows of x must be a multiple of 4.
 */
export function coldfilt<T extends FloatArray>(x: Plane<T>, ha: Filter, hb: Filter): Plane<T> {
  const r = x.rows;
  if (r % 4 !== 0) throw new RangeError('coldfilt: number of rows must be a multiple of 4');
  if (ha.length !== hb.length || ha.length % 2 !== 0)
    throw new RangeError('coldfilt: ha, hb must be even, same length');
  const m = ha.length;
  const taps = m / 2;
  const y = zerosLike(x, r / 2, x.cols);
  // Which filter lands on the even output rows depends on the sign of sum(ha * hb), as in python.
  const aFirst = dot(ha, hb) > 0;
  // python: xe[j] = refl(j - m), t = 5, 9, 13, ...; Y[s1] = X[xe[t-1]]*hao + X[xe[t-3]]*hae,
  // Y[s2] = X[xe[t]]*hbo + X[xe[t-2]]*hbe, each a 'valid' convolution over the gathered rows.
  const aRows = new Array<number>(m);
  const bRows = new Array<number>(m);
  const aCoeffs = new Array<number>(m);
  const bCoeffs = new Array<number>(m);
  for (let k = 0; k < taps; k++) {
    aCoeffs[2 * k] = tap(ha, 2 * k);
    aCoeffs[2 * k + 1] = tap(ha, 2 * k + 1);
    bCoeffs[2 * k] = tap(hb, 2 * k);
    bCoeffs[2 * k + 1] = tap(hb, 2 * k + 1);
  }
  for (let i = 0; i < r / 4; i++) {
    for (let k = 0; k < taps; k++) {
      const t = 5 + 4 * (i + taps - 1 - k) - m;
      aRows[2 * k] = reflectIndex(t - 1, r);
      aRows[2 * k + 1] = reflectIndex(t - 3, r);
      bRows[2 * k] = reflectIndex(t, r);
      bRows[2 * k + 1] = reflectIndex(t - 2, r);
    }
    sumRows(y, aFirst ? 2 * i : 2 * i + 1, x, aRows, aCoeffs);
    sumRows(y, aFirst ? 2 * i + 1 : 2 * i, x, bRows, bCoeffs);
  }
  return y;
}

/**
 * The inverse of coldfilt: filters the columns of x with the q-shift pair ha, hb and interpolates
 * by two (output has twice the rows). Rows of x must be even.
 */
export function colifilt<T extends FloatArray>(x: Plane<T>, ha: Filter, hb: Filter): Plane<T> {
  const r = x.rows;
  if (r % 2 !== 0) throw new RangeError('colifilt: number of rows must be even');
  if (ha.length !== hb.length || ha.length % 2 !== 0)
    throw new RangeError('colifilt: ha, hb must be even, same length');
  const m = ha.length;
  const m2 = m / 2;
  const y = zerosLike(x, 2 * r, x.cols);
  const aFirst = dot(ha, hb) > 0;
  // python: xe[j] = refl(j - m2); t starts on 'd' samples (3, 5, ...) when m/2 is even and on 'b'
  // samples (2, 4, ...) when it is odd; ta/tb pick which tree reads which phase.
  const evenHalf = m2 % 2 === 0;
  const t0 = evenHalf ? 3 : 2;
  // Output row o + q reads rows rows[q][k] with coefficients coeffs[q][k], k over the m2 taps.
  const rows = [0, 1, 2, 3].map(() => new Array<number>(m2));
  const coeffs = [0, 1, 2, 3].map(() => new Array<number>(m2));
  const [first, second] = evenHalf ? [1, 0] : [0, 1];
  for (let k = 0; k < m2; k++) {
    (coeffs[0] as number[])[k] = tap(ha, 2 * k + first);
    (coeffs[1] as number[])[k] = tap(hb, 2 * k + first);
    (coeffs[2] as number[])[k] = tap(ha, 2 * k + second);
    (coeffs[3] as number[])[k] = tap(hb, 2 * k + second);
  }
  const shift = evenHalf ? 2 : 0;
  for (let i = 0; i < r / 2; i++) {
    for (let k = 0; k < m2; k++) {
      const t = t0 + 2 * (i + m2 - 1 - k) - m2;
      const ta = aFirst ? t : t - 1;
      const tb = aFirst ? t - 1 : t;
      (rows[0] as number[])[k] = reflectIndex(tb - shift, r);
      (rows[1] as number[])[k] = reflectIndex(ta - shift, r);
      (rows[2] as number[])[k] = reflectIndex(tb, r);
      (rows[3] as number[])[k] = reflectIndex(ta, r);
    }
    for (let q = 0; q < 4; q++) sumRows(y, 4 * i + q, x, rows[q] as number[], coeffs[q] as number[]);
  }
  return y;
}
