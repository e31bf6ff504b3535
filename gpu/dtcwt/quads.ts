/**
 * Conversions between the four real trees of the dual-tree transform and complex subbands
 * (python dtcwt's q2c / c2q), plus the small plane utilities the 2-D transform needs.
 *
 * Each 2x2 block of a filtered image holds one sample of each of the four real trees:
 *   a b
 *   c d
 * and the two complex subbands of an orientation pair are (p - q, p + q) with
 * p = (a + jb)/sqrt(2), q = (d - jc)/sqrt(2). c2q is the exact inverse of that mapping.
 */
import { wasmPlanes } from '../wasm/rows.js';
import { type FloatArray, type Plane, zerosLike } from './lowlevel.js';

/** Orientations per level, in the library order 15, 45, 75, 105, 135, 165 degrees. */
export const ORIENTATIONS = 6;

/**
 * One level of complex highpass coefficients, stored like python's [rows, cols, 6] complex array
 * split into real and imaginary parts: element (i, j, o) is at (i * cols + j) * 6 + o.
 */
export interface Highpass<T extends FloatArray = Float64Array> {
  re: T;
  im: T;
  rows: number;
  cols: number;
}

export function transpose<T extends FloatArray>(x: Plane<T>): Plane<T> {
  const { rows, cols, data } = x;
  const y = zerosLike(x, cols, rows);
  const planes = wasmPlanes();
  if (planes.owns(x.data) && planes.owns(y.data)) {
    planes.transpose(y.data as Float32Array, x.data as Float32Array, rows, cols);
    return y;
  }
  const out = y.data;
  for (let i = 0; i < rows; i++) {
    const o = i * cols;
    for (let j = 0; j < cols; j++) out[j * rows + i] = data[o + j] as number;
  }
  return y;
}

/** a + b, element-wise, into a new plane (shapes must agree). */
export function addPlanes<T extends FloatArray>(a: Plane<T>, b: Plane<T>): Plane<T> {
  if (a.rows !== b.rows || a.cols !== b.cols) throw new RangeError('addPlanes: shape mismatch');
  const y = zerosLike(a, a.rows, a.cols);
  const out = y.data;
  for (let i = 0; i < out.length; i++) out[i] = (a.data[i] as number) + (b.data[i] as number);
  return y;
}

/**
 * q2c: converts the quads of y (2R x 2C) into complex samples and writes them into orientations
 * o1 (p - q) and o2 (p + q) of the highpass level hp (R x C).
 */
export function q2c<T extends FloatArray>(y: Plane<T>, hp: Highpass<T>, o1: number, o2: number): void {
  const { rows, cols, re, im } = hp;
  if (y.rows !== 2 * rows || y.cols !== 2 * cols) throw new RangeError('q2c: quad image does not match highpass');
  const s = Math.SQRT1_2;
  const d = y.data;
  const w = y.cols;
  for (let i = 0; i < rows; i++) {
    const top = 2 * i * w;
    const bottom = top + w;
    for (let j = 0; j < cols; j++) {
      const pa = (d[top + 2 * j] as number) * s;
      const pb = (d[top + 2 * j + 1] as number) * s;
      const qc = (d[bottom + 2 * j] as number) * s;
      const qd = (d[bottom + 2 * j + 1] as number) * s;
      // p = pa + j pb, q = qd - j qc
      const at = (i * cols + j) * ORIENTATIONS;
      re[at + o1] = pa - qd;
      im[at + o1] = pb + qc;
      re[at + o2] = pa + qd;
      im[at + o2] = pb - qc;
    }
  }
}

/**
 * c2q: scales orientations o1, o2 of hp by their gains and rebuilds the 2R x 2C quad image that
 * q2c would have read them from.
 */
export function c2q<T extends FloatArray>(
  hp: Highpass<T>,
  o1: number,
  o2: number,
  like: Plane<T>,
  gain1 = 1,
  gain2 = 1,
): Plane<T> {
  const { rows, cols, re, im } = hp;
  const x = zerosLike(like, 2 * rows, 2 * cols);
  const d = x.data;
  const w = x.cols;
  const s1 = Math.SQRT1_2 * gain1;
  const s2 = Math.SQRT1_2 * gain2;
  for (let i = 0; i < rows; i++) {
    const top = 2 * i * w;
    const bottom = top + w;
    for (let j = 0; j < cols; j++) {
      const at = (i * cols + j) * ORIENTATIONS;
      const r1 = (re[at + o1] as number) * s1;
      const i1 = (im[at + o1] as number) * s1;
      const r2 = (re[at + o2] as number) * s2;
      const i2 = (im[at + o2] as number) * s2;
      // P = w1 + w2, Q = w1 - w2; a = Re P, b = Im P, c = Im Q, d = -Re Q
      d[top + 2 * j] = r1 + r2;
      d[top + 2 * j + 1] = i1 + i2;
      d[bottom + 2 * j] = i1 - i2;
      d[bottom + 2 * j + 1] = -(r1 - r2);
    }
  }
  return x;
}
