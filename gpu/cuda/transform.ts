/**
 * The forward and inverse 2-D DTCWT as kernel launches (program.ts), step for step the CPU
 * reference's (gpu/dtcwt/cpu.ts), with the same sizes, edge extensions and crops. The reference
 * filters columns and transposes; here planes stay in their natural orientation and each filter
 * reads along axis 0 (columns) or axis 1 (rows), so that reference.transpose(colfilter(x)) is
 * filter(x, axis) with the result in the orientation the reference ends up in.
 */
import type { DtcwtFilters } from '../dtcwt/filters.js';
import { i32, type PlaneRef, type Program, ptr } from './program.js';

type FilterName = 'h0o' | 'h1o' | 'g0o' | 'g1o' | 'h0a' | 'h0b' | 'h1a' | 'h1b' | 'g0a' | 'g0b' | 'g1a' | 'g1b';

/** The filter bank's taps as float32 in one shared buffer, and where each filter starts. */
export interface Taps {
  buffer: string;
  at: Record<FilterName, { byteOffset: number; length: number }>;
  values: Record<FilterName, Float64Array>;
}

export function tapsOf(program: Program, filters: DtcwtFilters): Taps {
  const values = { ...filters.biort, ...filters.qshift } as Record<FilterName, Float64Array>;
  const names = Object.keys(values) as FilterName[];
  const all = new Float32Array(names.reduce((n, k) => n + values[k].length, 0));
  const at = {} as Taps['at'];
  let offset = 0;
  for (const k of names) {
    all.set(values[k], offset);
    at[k] = { byteOffset: offset * 4, length: values[k].length };
    offset += values[k].length;
  }
  const bytes = new Uint8Array(all.buffer);
  return { buffer: program.buffer('taps', bytes.length, true, bytes), at, values };
}

/** One level of complex coefficients: re and im planes of rows x cols x 6, or null where all zero. */
export interface LevelRef {
  re: string;
  im: string;
  rows: number;
  cols: number;
}

export interface LevelShape {
  rows: number;
  cols: number;
  level: LevelRef | null;
}

const dot = (a: Float64Array, b: Float64Array) => a.reduce((s, v, i) => s + v * (b[i] as number), 0);

/** Filters with odd h along an axis (colfilter); `into` adds to an existing plane of the same size. */
function filterOdd(p: Program, t: Taps, x: PlaneRef, axis: 0 | 1, h: FilterName, into?: PlaneRef): PlaneRef {
  const y = into ?? p.plane('odd', x.rows, x.cols);
  const tap = t.at[h];
  const args = [ptr(x.buffer), i32(x.rows), i32(x.cols), p.stride(x), i32(axis), ptr(t.buffer, tap.byteOffset)];
  p.launch('filter_odd', x.rows * x.cols, [...args, i32(tap.length), ptr(y.buffer), p.stride(y), i32(into ? 1 : 0)]);
  return y;
}

/** coldfilt along an axis with the pair (ha, hb): half the size on that axis. */
function filterDown(p: Program, t: Taps, x: PlaneRef, axis: 0 | 1, ha: FilterName, hb: FilterName): PlaneRef {
  const y = p.plane('down', axis === 0 ? x.rows / 2 : x.rows, axis === 0 ? x.cols : x.cols / 2);
  const aFirst = dot(t.values[ha], t.values[hb]) > 0 ? 1 : 0;
  const pair = [ptr(t.buffer, t.at[ha].byteOffset), ptr(t.buffer, t.at[hb].byteOffset), i32(t.at[ha].length)];
  const args = [ptr(x.buffer), i32(x.rows), i32(x.cols), p.stride(x), i32(axis), ...pair, i32(aFirst)];
  p.launch('filter_down', y.rows * y.cols, [...args, ptr(y.buffer), p.stride(y)]);
  return y;
}

/** colifilt along an axis with the pair (ha, hb): twice the size on that axis. */
function filterUp(p: Program, t: Taps, x: PlaneRef, axis: 0 | 1, ha: FilterName, hb: FilterName, into?: PlaneRef) {
  const y = into ?? p.plane('up', axis === 0 ? x.rows * 2 : x.rows, axis === 0 ? x.cols : x.cols * 2);
  const aFirst = dot(t.values[ha], t.values[hb]) > 0 ? 1 : 0;
  const pair = [ptr(t.buffer, t.at[ha].byteOffset), ptr(t.buffer, t.at[hb].byteOffset), i32(t.at[ha].length)];
  const args = [ptr(x.buffer), i32(x.rows), i32(x.cols), p.stride(x), i32(axis), ...pair, i32(aFirst)];
  p.launch('filter_up', y.rows * y.cols, [...args, ptr(y.buffer), p.stride(y), i32(into ? 1 : 0)]);
  return y;
}

function q2c(p: Program, quad: PlaneRef, level: LevelRef, o1: number, o2: number): void {
  const { rows, cols } = level;
  const hpStride = i32(rows * cols * 6);
  const args = [ptr(quad.buffer), i32(rows), i32(cols), p.stride(quad), ptr(level.re), ptr(level.im), hpStride];
  p.launch('q2c', rows * cols, [...args, i32(o1), i32(o2)]);
}

function c2q(p: Program, level: LevelRef, o1: number, o2: number): PlaneRef {
  const { rows, cols } = level;
  const quad = p.plane('quad', rows * 2, cols * 2);
  const args = [ptr(level.re), ptr(level.im), i32(rows), i32(cols), i32(rows * cols * 6), i32(o1), i32(o2)];
  p.launch('c2q', rows * cols, [...args, ptr(quad.buffer), p.stride(quad)]);
  return quad;
}

export function newLevel(p: Program, rows: number, cols: number): LevelRef {
  const bytes = rows * cols * 6 * 4;
  return { re: p.buffer('re', bytes), im: p.buffer('im', bytes), rows, cols };
}

export interface ForwardResult {
  /** null when the caller said it does not need it (the video mark drops the lowpass) */
  lowpass: PlaneRef | null;
  levels: LevelShape[];
}

/**
 * forward2d's launches. Levels before `firstHighpass` are sized but not computed (level: null);
 * `lowpass: false` skips the last level's lowpass, which the mark does not use.
 */
export function forwardSteps(
  p: Program,
  t: Taps,
  image: PlaneRef,
  levels: number,
  firstHighpass: number,
  lowpass = true,
): ForwardResult {
  let x = image;
  if (x.rows % 2 || x.cols % 2) x = p.copyClamped(x, x.rows + (x.rows % 2), x.cols + (x.cols % 2), 0, 0);
  if (levels === 0) return { lowpass: x, levels: [] };
  const shapes: LevelShape[] = [];
  const last = (level: number) => level === levels && !lowpass;
  // Level 1: the odd biorthogonal filters, no decimation.
  const lo = filterOdd(p, t, x, 0, 'h0o');
  let lolo = levels === 1 && !lowpass ? null : filterOdd(p, t, lo, 1, 'h0o');
  let level: LevelRef | null = null;
  if (firstHighpass <= 1) {
    level = newLevel(p, x.rows / 2, x.cols / 2);
    const hi = filterOdd(p, t, x, 0, 'h1o');
    q2c(p, filterOdd(p, t, hi, 1, 'h0o'), level, 0, 5);
    q2c(p, filterOdd(p, t, lo, 1, 'h1o'), level, 2, 3);
    q2c(p, filterOdd(p, t, hi, 1, 'h1o'), level, 1, 4);
  }
  shapes.push({ rows: x.rows / 2, cols: x.cols / 2, level });
  for (let n = 2; n <= levels; n++) {
    if (!lolo) throw new Error('forward: a level after the last');
    const padRows = lolo.rows % 4 ? 1 : 0;
    const padCols = lolo.cols % 4 ? 1 : 0;
    const input =
      padRows || padCols
        ? p.copyClamped(lolo, lolo.rows + 2 * padRows, lolo.cols + 2 * padCols, padRows, padCols)
        : lolo;
    const down = filterDown(p, t, input, 0, 'h0b', 'h0a');
    lolo = last(n) ? null : filterDown(p, t, down, 1, 'h0b', 'h0a');
    const shape = { rows: input.rows / 4, cols: input.cols / 4, level: null as LevelRef | null };
    if (n >= firstHighpass) {
      const lv = newLevel(p, shape.rows, shape.cols);
      const hi = filterDown(p, t, input, 0, 'h1b', 'h1a');
      q2c(p, filterDown(p, t, hi, 1, 'h0b', 'h0a'), lv, 0, 5);
      q2c(p, filterDown(p, t, down, 1, 'h1b', 'h1a'), lv, 2, 3);
      q2c(p, filterDown(p, t, hi, 1, 'h1b', 'h1a'), lv, 1, 4);
      shape.level = lv;
    }
    shapes.push(shape);
  }
  return { lowpass: lolo, levels: shapes };
}

type Filt = (x: PlaneRef, axis: 0 | 1, into?: PlaneRef) => PlaneRef;

/** One synthesis step (cpu.ts's synthesise), with null standing for an all-zero plane. */
function synthesise(p: Program, z: PlaneRef | null, level: LevelRef | null, lo: Filt, hi: Filt): PlaneRef | null {
  const quads = level && { q05: c2q(p, level, 0, 5), q23: c2q(p, level, 2, 3), q14: c2q(p, level, 1, 4) };
  const sum = (f: Filt, a: PlaneRef | null, g: Filt, b: PlaneRef | null, axis: 0 | 1) => {
    const first = a && f(a, axis);
    return b ? g(b, axis, first ?? undefined) : first;
  };
  const y1 = sum(lo, z, hi, quads?.q05 ?? null, 0);
  const y2 = quads && sum(lo, quads.q23, hi, quads.q14, 0);
  return sum(lo, y1, hi, y2, 1);
}

/**
 * inverse2d's launches: rebuilds the height x width plane from a lowpass (null: zero) and levels
 * (null: zero). Returns null when everything is zero, so the caller can zero its output instead.
 */
export function inverseSteps(
  p: Program,
  t: Taps,
  lowpass: PlaneRef | null,
  lowShape: { rows: number; cols: number },
  levels: readonly LevelShape[],
  height: number,
  width: number,
): { plane: PlaneRef | null; rows: number; cols: number } {
  let z = lowpass;
  let rows = lowShape.rows;
  let cols = lowShape.cols;
  for (let n = levels.length; n >= 2; n--) {
    const shape = levels[n - 1] as LevelShape;
    if (shape.rows * 2 !== rows || shape.cols * 2 !== cols)
      throw new RangeError('inverse2d: highpass sizes are not consistent');
    const lo: Filt = (x, axis, into) => filterUp(p, t, x, axis, 'g0b', 'g0a', into);
    const hi: Filt = (x, axis, into) => filterUp(p, t, x, axis, 'g1b', 'g1a', into);
    z = synthesise(p, z, shape.level, lo, hi);
    // Undo the forward pass's divisible-by-4 extension: the result must be twice the next level up.
    const next = levels[n - 2] as LevelShape;
    const cropRows = rows * 2 !== next.rows * 2 ? 1 : 0;
    const cropCols = cols * 2 !== next.cols * 2 ? 1 : 0;
    if (rows * 2 - 2 * cropRows !== next.rows * 2 || cols * 2 - 2 * cropCols !== next.cols * 2)
      throw new RangeError('inverse2d: highpass sizes are not consistent');
    rows = next.rows * 2;
    cols = next.cols * 2;
    if (z && (cropRows || cropCols)) z = p.copyClamped(z, rows, cols, -cropRows, -cropCols);
  }
  const first = levels[0];
  if (first) {
    if (first.rows * 2 !== rows || first.cols * 2 !== cols)
      throw new RangeError('inverse2d: highpass sizes are not consistent');
    const lo: Filt = (x, axis, into) => filterOdd(p, t, x, axis, 'g0o', into);
    const hi: Filt = (x, axis, into) => filterOdd(p, t, x, axis, 'g1o', into);
    z = synthesise(p, z, first.level, lo, hi);
  }
  if (z && (z.rows !== height || z.cols !== width)) z = p.copyClamped(z, height, width, 0, 0);
  return { plane: z, rows: height, cols: width };
}
