import { NESTED_BASIS, wordToBinaryId } from '../../src/domain/identity/nested-code.js';
import { matchCandidates } from '../../src/domain/forensics/matching/matching.js';
import type { Candidate } from '../../src/domain/forensics/matching/packed-ids.js';
import { agreeingOn, type Population, random40 } from './populations.js';
import { FIXED_RULE } from '../../src/watermark/segment-rule.js';

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

type Tally = { framed: number; colluderNamed: number };

/**
 * Runs the real matcher on a leak the colluders ai and bi made, whose segments read `consistent`
 * on the positions set in `positions` (the others are undecided or read both ways), and tallies
 * a strong match on anyone else as framing. The candidates are the viewers who fit every such
 * position (found by a scan of all ids), the colluders, and 1,000 others: leaving out viewers who
 * contradict a consistently read bit only lowers the matcher's N and drops confusion terms below
 * 1e-13, so the count can only err towards framing.
 */
function tallyMatch(
  p: Population,
  tally: Tally,
  pair: [number, number],
  segments: { index: number; z: number }[],
  consistent: bigint,
  positions: bigint,
): void {
  const [ai, bi] = pair;
  const fit = new Set([ai, bi, ...agreeingOn(p, consistent, positions)]);
  for (let k = 0; k < 1000; k++) fit.add(Math.floor(Math.random() * p.ids.length));
  const candidates: Candidate[] = [...fit].map((i) => ({
    viewerId: String(i),
    binaryId: wordToBinaryId(p.ids[i] as bigint),
  }));
  const result = matchCandidates(segments, candidates, { mask: p.mask, rule: FIXED_RULE });
  if (result.classification !== 'strong_match') return;
  if (result.matched?.viewerId === String(ai) || result.matched?.viewerId === String(bi)) tally.colluderNamed++;
  else tally.framed++;
}

/** Two distinct colluders' indexes, drawn at random. */
function pairOf(p: Population): [number, number] {
  for (;;) {
    const [ai, bi] = [Math.floor(Math.random() * p.ids.length), Math.floor(Math.random() * p.ids.length)];
    if (p.ids[ai] !== p.ids[bi]) return [ai, bi];
  }
}

const bitOf = (word: bigint, i: number) => Number((word >> BigInt(i)) & 1n);
/** A segment read far above the detector's threshold as `bit` (z > 0 is variant A, bit 0). */
const readAs = (bit: number) => (bit ? -1 : 1) * (8 + gaussian());

/**
 * Two colluders average their copies: where their ids differ the marks cancel and the detector
 * reads the segment as undecided (z ~ N(0, 1)); elsewhere it reads their common bit at |z| ≈ 8.
 */
export function averagedCopies(p: Population, trials: number): Tally {
  const tally = { framed: 0, colluderNamed: 0 };
  for (let t = 0; t < trials; t++) {
    const pair = pairOf(p);
    const [a, b] = pair.map((i) => p.ids[i] as bigint) as [bigint, bigint];
    const decided = ~(a ^ b) & FULL;
    const segments = Array.from({ length: 40 }, (_, i) => ({
      index: i,
      z: bitOf(decided, i) ? readAs(bitOf(a, i)) : gaussian(),
    }));
    tallyMatch(p, tally, pair, segments, a, decided);
  }
  return tally;
}

/**
 * Two colluders splice a longer copy segment by segment at random, not per bit position: a leak of
 * `length` segments (more than 40) reads positions 0 … length − 41 twice, and where the colluders
 * differ those two reads disagree half the time, each read far above the threshold.
 */
export function perSegmentSplices(p: Population, trials: number, length = 60): Tally {
  const tally = { framed: 0, colluderNamed: 0 };
  for (let t = 0; t < trials; t++) {
    const pair = pairOf(p);
    const [a, b] = pair.map((i) => p.ids[i] as bigint) as [bigint, bigint];
    const reads: number[][] = Array.from({ length: 40 }, () => []);
    const segments = Array.from({ length }, (_, s) => {
      const bit = bitOf(Math.random() < 0.5 ? a : b, s % 40);
      reads[s % 40]?.push(bit);
      return { index: s, z: readAs(bit) };
    });
    let consistent = 0n;
    let positions = 0n;
    reads.forEach((bits, i) => {
      if (bits.some((bit) => bit !== bits[0])) return;
      positions |= 1n << BigInt(i);
      if (bits[0]) consistent |= 1n << BigInt(i);
    });
    tallyMatch(p, tally, pair, segments, consistent, positions);
  }
  return tally;
}
