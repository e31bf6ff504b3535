import { describe, expect, it } from 'vitest';
import { wordToBinaryId } from '../../src/domain/identity/nested-code.js';
import { viewerIdKey, viewerIdWord } from '../../src/domain/identity/viewer-ids.js';
import { identificationBound, levelCensus, othersThan } from '../../src/domain/forensics/matching/id-levels.js';
import { packCandidates } from '../../src/domain/forensics/matching/packed-ids.js';
import { rng } from '../helpers/seeded.js';

// The identification figure rests on where each id lies among the nested codes: the census must
// place drm's ids in the levels they were drawn from, and the figure must not fall below how
// often an innocent really shares a leaker's decided bits.

const key = viewerIdKey(Buffer.alloc(32, 9));
const N = 4095;
const ids = Array.from({ length: N }, (_, i) => viewerIdWord(key, BigInt(i)));
const packed = packCandidates(ids.map((w, i) => ({ viewerId: `v${i}`, binaryId: wordToBinaryId(w) })));
const LEVEL_24 = 9;

describe('the level census', () => {
  it('places the first 4,095 viewers in the levels they were drawn from: 15 in 24, 240 in 28, 3,840 in 32', () => {
    const census = levelCensus(packed, key.mask);
    expect(census.counts.slice(LEVEL_24, LEVEL_24 + 3)).toEqual([15, 240, 3840]);
    expect(census.counts.reduce((a, b) => a + b, 0)).toBe(N);
  });

  it('finds random ids mostly in the top level (without the key, nothing places them lower)', () => {
    const u = rng(1);
    const random = Array.from({ length: 2000 }, (_, i) => ({
      viewerId: `r${i}`,
      binaryId: Array.from({ length: 40 }, () => (u() < 0.5 ? '0' : '1')).join(''),
    }));
    const census = levelCensus(packCandidates(random), key.mask);
    // 15/16 of all 40-bit words lie in the shell of level 40
    expect(census.counts.at(-1)).toBeGreaterThan(1800);
  });
});

describe('the identification figure', () => {
  it('is 1 for a few bits, 0 with no other candidate, and falls to 2^-20 once the bits cover every level', () => {
    const census = levelCensus(packed, key.mask);
    const all = Array.from({ length: 40 }, (_, p) => p);
    expect(identificationBound(othersThan(census, 0), [3])).toBe(1);
    expect(identificationBound(new Array(14).fill(0), [3, 4])).toBe(0);
    expect(identificationBound(othersThan(census, 0), all)).toBeLessThanOrEqual(2 ** -20);
  });

  it('is not below how often an innocent really shares 16 consecutive bits of a leaker among 4,095 viewers', () => {
    const census = levelCensus(packed, key.mask);
    const u = rng(2);
    let fitting = 0;
    let bound = 0;
    const trials = 1000;
    for (let t = 0; t < trials; t++) {
      const leaker = Math.floor(u() * N);
      const start = Math.floor(u() * 40);
      const positions = Array.from({ length: 16 }, (_, i) => (start + i) % 40);
      const mask = positions.reduce((m, p) => m | (1n << BigInt(p)), 0n);
      const word = (ids[leaker] as bigint) & mask;
      for (let c = 0; c < N; c++) if (c !== leaker && ((ids[c] as bigint) & mask) === word) fitting++;
      bound += identificationBound(othersThan(census, leaker), positions);
    }
    // the figure is the expected number of innocents that fit: the count observed over 1,000 leaks
    // (about 60 at this length) stays within its Poisson spread of the figure summed
    expect(fitting).toBeLessThanOrEqual(bound + 4 * Math.sqrt(bound));
    expect(bound).toBeGreaterThan(20);
  });
});
