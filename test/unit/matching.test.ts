import { describe, expect, it } from 'vitest';
import { STRONG_FP, WEAK_FP, matchCandidates, signFor } from '../../src/forensics/matching.js';

/** mulberry32: a seeded uniform in [0, 1), so every scenario replays the same numbers. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Box–Muller: a standard normal from two uniforms. */
const gauss = (u: () => number) => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());

const randomId = (u: () => number) => Array.from({ length: 40 }, () => (u() < 0.5 ? '0' : '1')).join('');

const flip = (id: string, positions: readonly number[]) =>
  [...id].map((ch, b) => (positions.includes(b) ? (ch === '0' ? '1' : '0') : ch)).join('');

/** What the detector would read from a copy served to `id`: |z| ≈ strength on each segment. */
const leakOf = (id: string, indices: readonly number[], strength: number, u: () => number, noise = 1) =>
  indices.map((index) => ({ index, z: signFor(id, index) * strength + noise * gauss(u) }));

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('matchCandidates', () => {
  it('names the viewer whose bits a strong leak reads, among candidates that differ from it on the leaked segments', () => {
    const u = rng(1);
    const viewer = randomId(u);
    const leak = leakOf(viewer, range(0, 6), 12, u);
    const candidates = [
      { viewerId: 'all-six-flipped', binaryId: flip(viewer, range(0, 6)) },
      { viewerId: 'leaker', binaryId: viewer },
      { viewerId: 'one-flipped', binaryId: flip(viewer, [3]) },
    ];
    const r = matchCandidates(leak, candidates);
    expect(r.classification).toBe('strong_match');
    expect(r.matched?.viewerId).toBe('leaker');
    expect(r.matched?.contradictions).toBe(0);
    expect(r.runnerUp?.viewerId).toBe('one-flipped');
    expect(r.binaryId).toBe(viewer);
    expect(r.supportedBits).toBe(6);
    expect(r.falsePositiveProbability).toBeLessThan(1e-9);
  });

  it('never gives a strong match, and rarely a weak one, on an unmarked leak among 10,000 candidates', () => {
    const u = rng(2);
    const candidates = Array.from({ length: 10_000 }, (_, i) => ({ viewerId: `v${i}`, binaryId: randomId(u) }));
    let strong = 0;
    let weak = 0;
    let named = 0;
    for (let trial = 0; trial < 1000; trial++) {
      const leak = range(0, 20).map((index) => ({ index, z: gauss(u) }));
      const r = matchCandidates(leak, candidates);
      if (r.classification === 'strong_match') strong++;
      if (r.classification === 'weak_match') weak++;
      if (r.classification === 'no_match' && (r.matched || r.runnerUp)) named++;
    }
    expect(strong).toBe(0);
    // the union bound promises at most 0.1 expected; 2 leaves room for an unlucky seed, not for a broken bound
    expect(weak).toBeLessThanOrEqual(2);
    expect(named).toBe(0);
  });

  it('stays a weak match when another candidate equals the best on every segment the leak holds', () => {
    const u = rng(3);
    const viewer = randomId(u);
    const twin = flip(viewer, range(20, 40));
    const leak = leakOf(viewer, range(0, 20), 12, u);
    const r = matchCandidates(leak, [
      { viewerId: 'first', binaryId: viewer },
      { viewerId: 'twin', binaryId: twin },
    ]);
    expect(r.classification).toBe('weak_match');
    expect(r.confusionProbability).toBe(1);
    // on a tie the candidate listed first is the one reported
    expect(r.matched?.viewerId).toBe('first');
    expect(r.runnerUp).toEqual({ viewerId: 'twin', score: r.matched?.score });
  });

  it('refuses a strong match on a copy mixed from two viewers, which shows contradicting segments', () => {
    const u = rng(4);
    const a = randomId(u);
    const b = flip(a, [2, 5, 12, 15, 17]);
    const leak = [...leakOf(a, range(0, 10), 12, u), ...leakOf(b, range(10, 20), 12, u)];
    const r = matchCandidates(leak, [
      { viewerId: 'a', binaryId: a },
      { viewerId: 'b', binaryId: b },
    ]);
    expect(r.classification).not.toBe('strong_match');
    expect(r.matched?.contradictions).toBeGreaterThan(0);
  });

  it('counts segments s and s + 40 of a long leak as two readings of the same bit', () => {
    const u = rng(5);
    const viewer = randomId(u);
    const leak = leakOf(viewer, range(0, 45), 12, u, 0);
    // alone, neither reading of bit 0 is decided (3 < 4); together they are: 6 / √2 ≈ 4.24
    for (const s of leak) if (s.index % 40 === 0) s.z = signFor(viewer, 0) * 3;
    const r = matchCandidates(leak, [
      { viewerId: 'leaker', binaryId: viewer },
      { viewerId: 'other', binaryId: flip(viewer, [0, 1, 2]) },
    ]);
    expect(r.segments).toBe(45);
    expect(r.matched?.score).toBeCloseTo((43 * 12 + 2 * 3) / Math.sqrt(45), 9);
    expect(r.supportedBits).toBe(40);
    expect(r.binaryId).toBe(viewer);
  });

  it('gives no match, with false-positive probability 1, when there are no candidates', () => {
    const u = rng(6);
    const leak = leakOf(randomId(u), range(0, 10), 12, u);
    const r = matchCandidates(leak, []);
    expect(r.classification).toBe('no_match');
    expect(r.falsePositiveProbability).toBe(1);
    expect(r.matched).toBeUndefined();
    expect(r.candidates).toBe(0);
  });

  it('gives no match, with false-positive probability 1 and an unread id, when the leak has no segments', () => {
    const r = matchCandidates([], [{ viewerId: 'v', binaryId: '0'.repeat(40) }]);
    expect(r.classification).toBe('no_match');
    expect(r.falsePositiveProbability).toBe(1);
    expect(r.matched).toBeUndefined();
    expect(r.binaryId).toBe('?'.repeat(40));
    expect(r.supportedBits).toBe(0);
  });

  it('rejects a malformed binaryId with a RangeError', () => {
    const ok = { viewerId: 'ok', binaryId: '01'.repeat(20) };
    expect(() => matchCandidates([], [ok, { viewerId: 'short', binaryId: '0101' }])).toThrow(RangeError);
    expect(() => matchCandidates([], [ok, { viewerId: 'two', binaryId: `2${'0'.repeat(39)}` }])).toThrow(RangeError);
  });

  it('matches 60 segments against 10,000 candidates', () => {
    const u = rng(8);
    const candidates = Array.from({ length: 10_000 }, (_, i) => ({ viewerId: `v${i}`, binaryId: randomId(u) }));
    const leak = leakOf((candidates[1234] as { binaryId: string }).binaryId, range(0, 60), 6, u);
    const r = matchCandidates(leak, candidates);
    expect(r.matched?.viewerId).toBe('v1234');
  });

  it('never calls a weak leak strong, and its false-positive probability is N·exp(−S²/2)', () => {
    const u = rng(9);
    const viewer = randomId(u);
    const leak = leakOf(viewer, range(0, 5), 2.5, u, 0.3);
    const candidates = [
      { viewerId: 'leaker', binaryId: viewer },
      { viewerId: 'x', binaryId: randomId(u) },
      { viewerId: 'y', binaryId: randomId(u) },
    ];
    const r = matchCandidates(leak, candidates);
    const S = leak.reduce((acc, s) => acc + signFor(viewer, s.index) * s.z, 0) / Math.sqrt(leak.length);
    const expected = Math.min(1, 3 * Math.exp((-S * S) / 2));
    expect(r.classification).not.toBe('strong_match');
    expect(r.classification).toBe(expected <= WEAK_FP ? 'weak_match' : 'no_match');
    expect(Math.abs(r.falsePositiveProbability - expected) / expected).toBeLessThan(1e-9);
    expect(r.falsePositiveProbability).toBeGreaterThan(STRONG_FP);
  });

  it('adds up evidence too weak to decide any bit: ten segments at z ≈ 2.5 make a strong match', () => {
    const u = rng(10);
    const viewer = randomId(u);
    const leak = leakOf(viewer, range(0, 10), 2.5, u, 0);
    const r = matchCandidates(leak, [
      { viewerId: 'leaker', binaryId: viewer },
      { viewerId: 'x', binaryId: flip(viewer, range(0, 10)) },
      { viewerId: 'y', binaryId: flip(viewer, [0, 2, 4, 6, 8, 9, 7]) },
    ]);
    // S = 25/√10 ≈ 7.9: 3·exp(−31.25) ≈ 8e-14; the nearest other candidate differs on 7 segments, exp(−21.9) ≈ 3e-10
    expect(r.classification).toBe('strong_match');
    expect(r.falsePositiveProbability).toBeCloseTo(3 * Math.exp(-31.25), 20);
    expect(r.supportedBits).toBe(0);
    expect(r.binaryId).toBe(viewer);
  });

  it('predicts variant A (+1) for bit 0 and B (−1) for bit 1, bit s mod 40 for segment s', () => {
    const id = `01${'0'.repeat(38)}`;
    expect(signFor(id, 0)).toBe(1);
    expect(signFor(id, 1)).toBe(-1);
    expect(signFor(id, 41)).toBe(-1);
    expect(signFor(id, 80)).toBe(1);
  });
});
