import { describe, expect, it } from 'vitest';
import { forward2d, inverse2d } from '../../gpu/dtcwt/cpu.js';
import { dtcwtFilters } from '../../gpu/dtcwt/filters.js';
import { dtcwtCases, loadArray, maxAbs, maxAbsDiff, noise } from '../helpers/dtcwt-fixtures.js';

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

describe('DTCWT CPU backend against python dtcwt 0.12', () => {
  describe.each(dtcwtCases)('$name ($biort, $qshift, $levels levels, $height x $width)', (c) => {
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

    it.each(Array.from({ length: c.levels }, (_, i) => i + 1))(
      'matches highpass level %i (re and im) to 1e-9 relative',
      (level) => {
        const hp = transform.highpasses[level - 1];
        if (!hp) throw new Error(`missing level ${level}`);
        const re = loadArray(c, `highpass${level}.re`);
        const im = loadArray(c, `highpass${level}.im`);
        expect([hp.rows, hp.cols, 6]).toEqual(re.shape);
        expect(relativeError(hp.re, re.data)).toBeLessThan(1e-9);
        expect(relativeError(hp.im, im.data)).toBeLessThan(1e-9);
      },
    );

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

  it('inverts a transform with all-zero parts exactly as the sum of its parts (zero subbands are skipped)', () => {
    const t = forward2d(image, height, width, 4);
    const zeroed = (keep: (level: number) => boolean, lowpass: boolean) => ({
      ...t,
      lowpass: { ...t.lowpass, data: lowpass ? t.lowpass.data : new Float64Array(t.lowpass.data.length) },
      highpasses: t.highpasses.map((h, i) =>
        keep(i + 1) ? h : { ...h, re: new Float64Array(h.re.length), im: new Float64Array(h.im.length) },
      ),
    });
    const middle = inverse2d(zeroed((l) => l === 2 || l === 3, false));
    const rest = inverse2d(zeroed((l) => l !== 2 && l !== 3, true));
    const sum = middle.map((v, i) => v + (rest[i] as number));
    expect(maxAbsDiff(sum, image)).toBeLessThan(1e-6 * range(image));
    expect(maxAbs(middle)).toBeGreaterThan(0.01 * range(image));
    expect(inverse2d(zeroed(() => false, false)).every((v) => v === 0)).toBe(true);
  });
});
