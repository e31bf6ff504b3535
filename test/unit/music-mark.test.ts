import { describe, expect, it } from 'vitest';
import { KeyedRandom, watermarkKey } from '../../src/watermark/keyed-random.js';
import {
  DEFAULT_MUSIC_MARK,
  musicDelta,
  musicPattern,
  musicScore,
  tileLayout,
} from '../../src/watermark/music/mark.js';
import { frameCount } from '../../gpu/stft/stft.js';
import { bitFromZ } from '../../src/watermark/score.js';

const RATE = 44_100;
const key = watermarkKey(Buffer.from('m'.repeat(32)));
const content = '0c8f5a4e-1b2d-4e6f-8a9b-7c6d5e4f3a2b';

/** Ten seconds of something like music: a new note every half second, five harmonics, a noise floor. */
function music(seconds = 10): Float32Array {
  const r = new KeyedRandom(Uint32Array.from([5, 6, 7, 8]));
  const out = new Float32Array(RATE * seconds);
  const noise = r.gaussians(out.length);
  for (let n = 0; n < seconds * 2; n++) {
    const f0 = 110 * 2 ** (Math.floor(r.next() * 36) / 12);
    for (let i = n * (RATE / 2); i < (n + 1) * (RATE / 2); i++) {
      const t = (i - n * (RATE / 2)) / RATE;
      let v = 0;
      for (let h = 1; h <= 5; h++) v += Math.sin(2 * Math.PI * f0 * h * t) / h;
      out[i] = 0.25 * v * Math.exp(-2 * t) + 0.002 * (noise[i] as number);
    }
  }
  return out;
}

const apply = (x: Float32Array, d: Float32Array, sign: 1 | -1) => x.map((v, i) => v + sign * (d[i] as number));

/** A lossy path in miniature: noise 35 dB down and 16-bit samples. */
function attack(x: Float32Array, seed: number): Float32Array {
  const g = new KeyedRandom(Uint32Array.from([seed, 1, 2, 3])).gaussians(x.length);
  let power = 0;
  for (const v of x) power += v * v;
  const sigma = Math.sqrt(power / x.length) * 10 ** (-35 / 20);
  return x.map((v, i) => Math.round((v + sigma * (g[i] as number)) * 32767) / 32767);
}

const snrDb = (x: Float32Array, y: Float32Array) => {
  let s = 0;
  let e = 0;
  for (let i = 0; i < x.length; i++) {
    s += (x[i] as number) ** 2;
    e += ((x[i] as number) - (y[i] as number)) ** 2;
  }
  return 10 * Math.log10(s / e);
};

describe('music mark on STFT magnitudes', () => {
  const x = music();
  const layout = tileLayout(frameCount(x.length, DEFAULT_MUSIC_MARK.hop), RATE);
  const pattern = musicPattern(key, content, 2, layout.count);
  const delta = musicDelta(x, RATE, pattern);
  const a = apply(x, delta, 1);
  const b = apply(x, delta, -1);

  it('marks the band 500 Hz – 5 kHz in tiles, with an SNR of at least 30 dB', () => {
    expect(layout.firstBin).toBe(24);
    expect(layout.count).toBeGreaterThan(1000);
    expect(snrDb(x, a)).toBeGreaterThan(30);
    expect(snrDb(x, b)).toBeGreaterThan(30);
  });

  it('reads A as bit 0 and B as bit 1 through noise and 16-bit quantisation', () => {
    const zA = musicScore(x, attack(a, 1), RATE).z(pattern);
    const zB = musicScore(x, attack(b, 2), RATE).z(pattern);
    expect(zA).toBeGreaterThan(5);
    expect(zB).toBeLessThan(-5);
    expect(bitFromZ(zA)).toBe('0');
    expect(bitFromZ(zB)).toBe('1');
  });

  it('finds nothing in an unmarked copy or with another segment’s pattern', () => {
    expect(Math.abs(musicScore(x, attack(x, 3), RATE).z(pattern))).toBeLessThan(4);
    expect(Math.abs(musicScore(x, attack(a, 4), RATE).z(musicPattern(key, content, 3, layout.count)))).toBeLessThan(4);
  });

  it('refuses a pattern of the wrong size', () => {
    expect(() => musicDelta(x, RATE, new Float32Array(5))).toThrow(/pattern length/);
    expect(() => musicScore(x, a, RATE).z(new Float32Array(5))).toThrow(/pattern length/);
  });
});
