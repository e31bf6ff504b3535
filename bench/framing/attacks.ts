import { NESTED_BASIS, wordToBinaryId } from '../../src/domain/identity/nested-code.js';
import { matchCandidates } from '../../src/forensics/matching.js';
import type { Candidate } from '../../src/forensics/packed-ids.js';
import { agreeingOn, type Population, random40 } from './populations.js';

// The colluders' attacks, each counted as framing when the leak they make would name a viewer who
// did not collude. A splice read in full (40 bits, every segment far above the detector's
// threshold) names exactly the id it spells: the matcher's best candidate fits every bit, so it is
// a strong match exactly when that id is allocated (see run.ts), and set membership counts it.

const FULL = (1n << 40n) - 1n;
const pick = (p: Population): bigint => p.ids[Math.floor(Math.random() * p.ids.length)] as bigint;

/** Two colluders take each bit position's segments from one of them at random. */
export function randomSplices(p: Population, trials: number): number {
  let framed = 0;
  for (let t = 0; t < trials; t++) {
    const [a, b] = [pick(p), pick(p)];
    const fromA = random40();
    const spliced = (a & fromA) | (b & ~fromA & FULL);
    if (spliced !== a && spliced !== b && p.set.has(spliced)) framed++;
  }
  return framed;
}

/** Three colluders take, at every position where they differ, the odd one out: a XOR b XOR c, a word of the same coset. */
export function minoritySplices(p: Population, trials: number): number {
  let framed = 0;
  for (let t = 0; t < trials; t++) {
    const [a, b, c] = [pick(p), pick(p), pick(p)];
    const spliced = a ^ b ^ c;
    if (spliced !== a && spliced !== b && spliced !== c && p.set.has(spliced)) framed++;
  }
  return framed;
}

/**
 * The nonzero code words of the code of `dimension` whose support lies inside d: the messages
 * whose words vanish outside d, by Gaussian elimination (the attacker's exact search; the code
 * is in the source). Returned as a basis of that subcode.
 */
export function codeWordsInside(d: bigint, dimension: number): bigint[] {
  const outside = ~d & FULL;
  const pivots = new Map<number, { residue: bigint; word: bigint }>();
  const inside: bigint[] = [];
  for (let j = 0; j < dimension; j++) {
    let word = NESTED_BASIS[j] as bigint;
    let residue = word & outside;
    while (residue !== 0n) {
      const top = residue.toString(2).length - 1;
      const pivot = pivots.get(top);
      if (!pivot) break;
      residue ^= pivot.residue;
      word ^= pivot.word;
    }
    if (residue === 0n) inside.push(word);
    else pivots.set(residue.toString(2).length - 1, { residue, word });
  }
  return inside;
}

/**
 * Two colluders who know the public code (at the level every id lies in) and, from comparing their
 * copies, where their ids differ (d = a XOR b): they swap b's segments for a's on the support of a
 * code word e inside d other than d itself, so b XOR e is a word of the coset too.
 */
export function aimedSplices(p: Population, trials: number, dimension: number): { possible: number; framed: number } {
  let possible = 0;
  let framed = 0;
  for (let t = 0; t < trials; t++) {
    const [a, b] = [pick(p), pick(p)];
    if (a === b) continue;
    const basis = codeWordsInside(a ^ b, dimension);
    const choices = basis.length;
    if (choices === 0 || (choices === 1 && basis[0] === (a ^ b))) continue;
    let e = 0n;
    while (e === 0n || e === (a ^ b)) {
      e = 0n;
      for (const word of basis) if (Math.random() < 0.5) e ^= word;
    }
    possible++;
    if (p.set.has(b ^ e)) framed++;
  }
  return { possible, framed };
}

const gaussian = () => Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());

/**
 * Two colluders average their copies: where their ids differ the marks cancel and the detector
 * reads the segment as undecided (z ~ N(0, 1)); elsewhere it reads their common bit at |z| ≈ 8.
 * The real matcher runs on the viewers who fit every decided bit (found by a scan of all ids),
 * the colluders, and 1,000 others: leaving out viewers who contradict a decided bit only lowers
 * the matcher's N and drops confusion terms below 1e-13, so the count can only err towards framing.
 */
export function averagedCopies(p: Population, trials: number): { framed: number; colluderNamed: number } {
  let framed = 0;
  let colluderNamed = 0;
  for (let t = 0; t < trials; t++) {
    const [ai, bi] = [Math.floor(Math.random() * p.ids.length), Math.floor(Math.random() * p.ids.length)];
    const [a, b] = [p.ids[ai] as bigint, p.ids[bi] as bigint];
    if (a === b) continue;
    const decided = ~(a ^ b) & FULL;
    const fit = new Set([ai, bi, ...agreeingOn(p, a, decided)]);
    for (let k = 0; k < 1000; k++) fit.add(Math.floor(Math.random() * p.ids.length));
    const candidates: Candidate[] = [...fit].map((i) => ({ viewerId: String(i), binaryId: wordToBinaryId(p.ids[i] as bigint) }));
    const segments = Array.from({ length: 40 }, (_, i) => {
      const bit = (a >> BigInt(i)) & 1n;
      return { index: i, z: (decided >> BigInt(i)) & 1n ? (bit ? -1 : 1) * (8 + gaussian()) : gaussian() };
    });
    const result = matchCandidates(segments, candidates);
    if (result.classification !== 'strong_match') continue;
    if (result.matched?.viewerId === String(ai) || result.matched?.viewerId === String(bi)) colluderNamed++;
    else framed++;
  }
  return { framed, colluderNamed };
}
