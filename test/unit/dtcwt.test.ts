import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { forward2d, inverse2d } from '../../gpu/dtcwt/cpu.js';
import { type BiortName, dtcwtFilters, type QshiftName } from '../../gpu/dtcwt/filters.js';

// Reference coefficients written by python3-dtcwt 0.12 Transform2d.forward (see the manifest).
const FIXTURES = new URL('../../fixtures/dtcwt/', import.meta.url);

interface FixtureFile {
  file: string;
  shape: number[];
}

interface FixtureCase {
  name: string;
  biort: BiortName;
  qshift: QshiftName;
  levels: number;
  height: number;
  width: number;
  files: Record<string, FixtureFile>;
  reconstructionMaxAbsError: number;
}

const manifest = JSON.parse(readFileSync(new URL('manifest.json', FIXTURES), 'utf8')) as { cases: FixtureCase[] };

/** Raw little-endian float64, row-major; copied so the Float64Array is aligned. */
function loadArray(c: FixtureCase, key: string): { data: Float64Array; shape: number[] } {
  const entry = c.files[key];
  if (!entry) throw new Error(`fixture ${c.name} has no ${key}`);
  const bytes = readFileSync(new URL(entry.file, FIXTURES));
  const data = new Float64Array(bytes.byteLength / 8);
  for (let i = 0; i < data.length; i++) data[i] = bytes.readDoubleLE(i * 8);
  return { data, shape: entry.shape };
}

function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] as number));
  return m;
}

/** Max abs difference relative to the max abs of the reference array. */
function relativeError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  expect(actual.length).toBe(expected.length);
  let e = 0;
  for (let i = 0; i < expected.length; i++) e = Math.max(e, Math.abs((actual[i] as number) - (expected[i] as number)));
  return e / maxAbs(expected);
}

function range(a: ArrayLike<number>): number {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < a.length; i++) {
    lo = Math.min(lo, a[i] as number);
    hi = Math.max(hi, a[i] as number);
  }
  return hi - lo;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let e = 0;
  for (let i = 0; i < a.length; i++) e = Math.max(e, Math.abs((a[i] as number) - (b[i] as number)));
  return e;
}

/** Deterministic uniform noise in [0, 255) (mulberry32) so failures reproduce. */
function noise(length: number, seed: number): Float64Array {
  const out = new Float64Array(length);
  let s = seed >>> 0;
  for (let i = 0; i < length; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 255;
  }
  return out;
}

describe('DTCWT CPU backend against python dtcwt 0.12', () => {
  describe.each(manifest.cases)('$name ($biort, $qshift, $levels levels, $height x $width)', (c) => {
    const filters = dtcwtFilters(c.biort, c.qshift);
    const input = loadArray(c, 'input').data;
    const transform = forward2d(input, c.height, c.width, c.levels, filters);

    it('has one highpass level per level', () => {
      expect(transform.highpasses).toHaveLength(c.levels);
    });

    it('matches the lowpass to 1e-9 relative', () => {
      const ref = loadArray(c, 'lowpass');
      expect([transform.lowpass.rows, transform.lowpass.cols]).toEqual(ref.shape);
      expect(relativeError(transform.lowpass.data, ref.data)).toBeLessThan(1e-9);
    });

    it.each(Array.from({ length: c.levels }, (_, i) => i + 1))('matches highpass level %i (re and im) to 1e-9 relative', (level) => {
      const hp = transform.highpasses[level - 1];
      if (!hp) throw new Error(`missing level ${level}`);
      const re = loadArray(c, `highpass${level}.re`);
      const im = loadArray(c, `highpass${level}.im`);
      expect([hp.rows, hp.cols, 6]).toEqual(re.shape);
      expect(relativeError(hp.re, re.data)).toBeLessThan(1e-9);
      expect(relativeError(hp.im, im.data)).toBeLessThan(1e-9);
    });

    it('reconstructs the input through inverse2d', () => {
      const back = inverse2d(transform, filters);
      expect(back).toHaveLength(input.length);
      // Python's own round trip is ~1e-13 here (reconstructionMaxAbsError); 1e-6 of range is the contract.
      expect(maxAbsDiff(back, input)).toBeLessThan(1e-6 * range(input));
    });
  });
});

describe('DTCWT CPU backend on a 1080p slice', () => {
  // 135 x 240 is a 1920x1080 frame divided by 8: odd height exercises the row padding, and the
  // 4 levels pad again (136 -> 68 -> 34 -> 36) before the last q-shift level.
  const height = 135;
  const width = 240;
  const image = noise(height * width, 1080);

  it('has the expected level shapes and reconstructs perfectly at 4 levels', () => {
    const t = forward2d(image, height, width, 4);
    expect(t.highpasses.map((h) => [h.rows, h.cols])).toEqual([
      [68, 120],
      [34, 60],
      [17, 30],
      [9, 15],
    ]);
    expect([t.lowpass.rows, t.lowpass.cols]).toEqual([18, 30]);
    const back = inverse2d(t);
    expect(back).toHaveLength(image.length);
    expect(maxAbsDiff(back, image)).toBeLessThan(1e-6 * range(image));
  });

  it('runs the same code on Float32Array images', () => {
    const image32 = Float32Array.from(image);
    const t = forward2d(image32, height, width, 4, dtcwtFilters('near_sym_b', 'qshift_b'));
    expect(t.lowpass.data).toBeInstanceOf(Float32Array);
    expect(t.highpasses[0]?.re).toBeInstanceOf(Float32Array);
    const back = inverse2d(t, dtcwtFilters('near_sym_b', 'qshift_b'));
    expect(back).toBeInstanceOf(Float32Array);
    // f32 storage between stages: a few ulps of 255 per stage.
    expect(maxAbsDiff(back, image32)).toBeLessThan(1e-4 * range(image32));
  });
});
