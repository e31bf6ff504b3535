import { describe, expect, it } from 'vitest';
import { frameCount, hann, istft, stft } from '../../gpu/stft/stft.js';

/** A repeatable pseudo-random signal in [-1, 1) (mulberry32), so failures can be replayed. */
function noise(length: number, seed = 7): Float64Array {
  let a = seed >>> 0;
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = ((t ^ (t >>> 14)) >>> 0) / 2 ** 31 - 1;
  }
  return out;
}

const maxAbsDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
};

describe('STFT analysis and overlap-add resynthesis', () => {
  it.each([
    [2048, 1024, 44_100],
    [2048, 512, 44_100],
    [1024, 256, 10_007],
    [256, 128, 300],
    [64, 32, 65],
  ])('frame %i, hop %i: a round trip of %i samples gives the signal back', (frameSize, hop, length) => {
    const x = noise(length);
    const spec = stft(x, { frameSize, hop });
    expect(spec.frames).toBe(frameCount(length, hop));
    expect(spec.bins).toBe(frameSize / 2 + 1);
    const y = istft(spec);
    expect(y.length).toBe(length);
    expect(maxAbsDiff(x, y)).toBeLessThan(1e-12);
  });

  it('a pure tone peaks in its own bin, with the amplitude the window predicts', () => {
    const rate = 44_100;
    const frameSize = 2048;
    const bin = 93; // 93 · 44100 / 2048 ≈ 2002.6 Hz, exactly on a bin
    const f = (bin * rate) / frameSize;
    const x = Float64Array.from({ length: rate }, (_, i) => Math.sin((2 * Math.PI * f * i) / rate));
    const spec = stft(x, { frameSize, hop: 1024 });
    const t = 10; // a frame well inside the signal
    const mag = (k: number) => Math.hypot(spec.re[t * spec.bins + k] as number, spec.im[t * spec.bins + k] as number);
    let peak = 0;
    for (let k = 1; k < spec.bins; k++) if (mag(k) > mag(peak)) peak = k;
    expect(peak).toBe(bin);
    // A sine of amplitude 1 under a Hann window gives N/4 in its bin.
    expect(mag(bin)).toBeCloseTo(frameSize / 4, 6);
  });

  it('changing magnitudes and resynthesising keeps the change: analysis of the result shows it again', () => {
    const x = noise(20_000, 3);
    const opts = { frameSize: 1024, hop: 256 };
    const spec = stft(x, opts);
    const k = 100;
    for (let t = 0; t < spec.frames; t++) {
      spec.re[t * spec.bins + k] = (spec.re[t * spec.bins + k] as number) * 1.5;
      spec.im[t * spec.bins + k] = (spec.im[t * spec.bins + k] as number) * 1.5;
    }
    const again = stft(istft(spec), opts);
    const original = stft(x, opts);
    const energy = (g: typeof spec, bin: number) => {
      let e = 0;
      for (let t = 4; t < g.frames - 4; t++)
        e += Math.hypot(g.re[t * g.bins + bin] as number, g.im[t * g.bins + bin] as number);
      return e;
    };
    const before = energy(original, k);
    const after = energy(again, k);
    // Re-analysis spreads the change over the Hann window's main lobe (neighbouring bins), so
    // about half of a ×1.5 change stays in its own bin; a bin far away is untouched.
    expect(energy(again, k + 40) / energy(original, k + 40)).toBeCloseTo(1, 6);
    expect(after / before).toBeGreaterThan(1.2);
    expect(after / before).toBeLessThan(1.5);
  });

  it('the periodic Hann window overlaps to a constant at half and quarter frame hops', () => {
    const n = 512;
    const w = hann(n);
    for (const hop of [n / 2, n / 4]) {
      const sums = Array.from({ length: hop }, (_, i) => {
        let s = 0;
        for (let j = i; j < n; j += hop) s += w[j] as number;
        return s;
      });
      expect(
        maxAbsDiff(
          sums,
          sums.map(() => sums[0] as number),
        ),
      ).toBeLessThan(1e-12);
    }
  });

  it('refuses a frame size that is not a power of two and a hop over half the frame', () => {
    expect(() => stft(new Float64Array(100), { frameSize: 1000, hop: 250 })).toThrow(/power of two/);
    expect(() => stft(new Float64Array(100), { frameSize: 1024, hop: 600 })).toThrow(/hop must be/);
    expect(() => stft(new Float64Array(100), { frameSize: 1024, hop: 0 })).toThrow(/hop must be/);
  });
});
