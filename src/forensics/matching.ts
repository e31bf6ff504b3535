import { bitFromZ } from '../watermark/score.js';
import { ID_BITS } from '../watermark/segments.js';
import { BYTES, binaryIdAt, byteTable, type Candidate, type PackedCandidates, packCandidates } from './packed-ids.js';

/**
 * Names a leaker by matching the detector's per-segment scores against every candidate's
 * permanent id, rather than by reading 40 bits and looking the string up: evidence too weak to
 * decide a bit on its own still adds up across segments, and the numbers below say how sure we are.
 *
 * Null model. If the leak carries no candidate's mark, each segment's z = Σ p·m / √(Σ m²) has
 * fair independent pattern signs p, so E exp(λz) ≤ exp(λ²/2) (Hoeffding) and z is symmetric.
 * Clipping to ±Z_CLIP keeps that: for a symmetric variable E exp(λX) = E cosh(λ|X|), which only
 * shrinks when |X| does. Segments use independent patterns, so for any fixed signs σ the score
 * S = Σ σ(s)·z_s / √n is sub-Gaussian with variance proxy 1: P(S ≥ t) ≤ exp(−t²/2).
 *
 * False positive. The best of N candidates scoring S₁ by chance has probability at most
 * N·exp(−S₁²/2) (union bound), whatever the content and the attack; no estimated null is needed.
 *
 * Confusion. Were another candidate c the leaker, on the segments D_c where it and the best
 * disagree the best's signs would point against the mark, so M_c = Σ_{D_c} σ₁ z / √|D_c| has
 * mean ≤ 0 plus sub-Gaussian noise and P(M_c ≥ m) ≤ exp(−m²/2). A candidate equal to the best
 * on every segment held cannot be ruled out at all (p = 1). The sum over c bounds the chance that
 * the leaker is anyone else. This treats the best as fixed; it is picked from the same data, so
 * an exact bound would multiply each term by up to N: read the figure as how clearly the runner-up
 * is excluded, not as an exact p-value.
 *
 * Contradictions. A copy mixed from several viewers still scores high for one of them, but shows
 * segments decided firmly against that viewer; a strong match allows none.
 */

/** Beyond 20σ a score is saturated evidence: a glitching segment must not outweigh the rest. */
export const Z_CLIP = 20;

/** The detector's bit threshold (bitFromZ): a |z| this large decides a bit on its own. */
export const DECIDED_Z = 4;

/** One in a billion even across every candidate: a figure a court can read as "not chance". */
export const STRONG_FP = 1e-9;

/** Over 1,000 analyses of unmarked or wrong content the expected number of false weak matches is 0.1. */
export const WEAK_FP = 1e-4;

/** A strong match must also exclude the runner-up (and everyone else) at one in a million. */
export const STRONG_CONFUSION = 1e-6;

export interface MatchResult {
  classification: 'strong_match' | 'weak_match' | 'no_match';
  /** the best candidate; absent for no_match (a no_match never names a viewer) */
  matched?: { viewerId: string; binaryId: string; score: number; contradictions: number };
  /** the second-best candidate's viewerId and score, when there is one (for the report); absent for no_match too */
  runnerUp?: { viewerId: string; score: number };
  falsePositiveProbability: number;
  confusionProbability: number;
  binaryId: string;
  /** the bits the leak itself decides, `?` elsewhere (binaryId fills those from the match) */
  readout: string;
  supportedBits: number;
  candidates: number;
  segments: number;
}

/** The variant the viewer was served on a segment, as the sign its score should take: A (bit 0) is +1. */
export function signFor(binaryId: string, segment: number): 1 | -1 {
  return binaryId[segment % ID_BITS] === '0' ? 1 : -1;
}

const clip = (z: number) => (z > Z_CLIP ? Z_CLIP : z < -Z_CLIP ? -Z_CLIP : z);

/** The clipped z summed per bit, how many segments carry each bit, and the bits the leak decides on its own. */
interface FoldedScores {
  sum: Float64Array;
  count: Float64Array;
  readout: string;
}

/** Segments s and s + 40 carry the same bit, so every sum the match needs only takes the z folded per bit. */
function foldSegments(segments: readonly { index: number; z: number }[]): FoldedScores {
  const sum = new Float64Array(ID_BITS);
  const count = new Float64Array(ID_BITS);
  const seen = new Set<number>();
  for (const s of segments) {
    // A repeated segment would count its evidence twice and break the independence the bound needs.
    if (!Number.isInteger(s.index) || s.index < 0 || seen.has(s.index)) {
      throw new RangeError(`segment index ${s.index} is not a new non-negative integer`);
    }
    if (Number.isNaN(s.z)) throw new RangeError(`segment ${s.index} has no score`);
    seen.add(s.index);
    const b = s.index % ID_BITS;
    sum[b] = (sum[b] as number) + clip(s.z);
    count[b] = (count[b] as number) + 1;
  }
  let readout = '';
  for (let b = 0; b < ID_BITS; b++) {
    const k = count[b] as number;
    readout += bitFromZ(k === 0 ? 0 : (sum[b] as number) / Math.sqrt(k), DECIDED_Z);
  }
  return { sum, count, readout };
}

interface Ranking {
  best: number;
  bestScore: number;
  /** -1 with a single candidate */
  second: number;
  secondScore: number;
}

/** Every candidate's score S = Σ σ·z / √n, keeping the best two. */
function rankCandidates(packed: Uint8Array, N: number, folded: FoldedScores, n: number): Ranking {
  const { sum } = folded;
  // σ is +1 on a 0-bit and −1 on a 1-bit, so Σ σ·z = Σ z − 2·(Σ z over the candidate's 1-bits).
  let total = 0;
  for (let b = 0; b < ID_BITS; b++) total += sum[b] as number;
  const onesSum = byteTable(sum);
  const invSqrtN = n === 0 ? 0 : 1 / Math.sqrt(n);
  const r: Ranking = { best: 0, bestScore: 0, second: -1, secondScore: 0 };
  for (let c = 0; c < N; c++) {
    const o = c * BYTES;
    let ones = 0;
    for (let j = 0; j < BYTES; j++) ones += onesSum[j * 256 + (packed[o + j] as number)] as number;
    const score = (total - 2 * ones) * invSqrtN;
    // Strict comparisons: on a tie the earlier candidate keeps its place.
    if (c === 0 || score > r.bestScore) {
      if (c > 0) {
        r.second = r.best;
        r.secondScore = r.bestScore;
      }
      r.best = c;
      r.bestScore = score;
    } else if (r.second < 0 || score > r.secondScore) {
      r.second = c;
      r.secondScore = score;
    }
  }
  return r;
}

/**
 * The chance that someone other than the best is the leaker (see Confusion above). D_c is where
 * c's bits differ from the best's: the XOR of their bytes picks |D_c| and Σ σ₁·z out of tables.
 */
function confusionProbability(packed: Uint8Array, N: number, best: number, winner: Candidate, folded: FoldedScores): number {
  const toward = new Float64Array(ID_BITS);
  for (let b = 0; b < ID_BITS; b++) toward[b] = signFor(winner.binaryId, b) * (folded.sum[b] as number);
  const towardSum = byteTable(toward);
  const countSum = byteTable(folded.count);
  const bo = best * BYTES;
  let confusion = 0;
  for (let c = 0; c < N && confusion < 1; c++) {
    if (c === best) continue;
    const o = c * BYTES;
    let d = 0;
    let m = 0;
    for (let j = 0; j < BYTES; j++) {
      const at = j * 256 + ((packed[o + j] as number) ^ (packed[bo + j] as number));
      d += countSum[at] as number;
      m += towardSum[at] as number;
    }
    const M = d === 0 ? 0 : m / Math.sqrt(d);
    confusion += M > 0 ? Math.exp((-M * M) / 2) : 1;
  }
  return Math.min(1, confusion);
}

/** Segments decided firmly against the variant the viewer was served. */
function contradictionsOf(segments: readonly { index: number; z: number }[], binaryId: string): number {
  let contradictions = 0;
  for (const s of segments) {
    const z = clip(s.z);
    if (Math.abs(z) >= DECIDED_Z && Math.sign(z) !== signFor(binaryId, s.index)) contradictions++;
  }
  return contradictions;
}

function classify(segments: number, falsePositiveProbability: number, confusionProbability: number, contradictions: number): MatchResult['classification'] {
  if (segments === 0) return 'no_match';
  if (falsePositiveProbability <= STRONG_FP && confusionProbability <= STRONG_CONFUSION && contradictions === 0) return 'strong_match';
  return falsePositiveProbability <= WEAK_FP ? 'weak_match' : 'no_match';
}

/** The leak's own decided bits stand (a disagreement must show in the report); the rest is the match's. */
function matchedBinaryId(readout: string, own: string): { binaryId: string; supportedBits: number } {
  let binaryId = '';
  let supportedBits = 0;
  for (let b = 0; b < ID_BITS; b++) {
    const read = readout[b] as string;
    binaryId += read === '?' ? (own[b] as string) : read;
    if (read === own[b]) supportedBits++;
  }
  return { binaryId, supportedBits };
}

export function matchCandidates(segments: readonly { index: number; z: number }[], candidates: readonly Candidate[]): MatchResult {
  return matchPackedCandidates(segments, packCandidates(candidates));
}

/** matchCandidates on candidates packed once (packCandidates, CandidatePacker): a million of them read from the database, or one population matched many times. */
export function matchPackedCandidates(segments: readonly { index: number; z: number }[], candidates: PackedCandidates): MatchResult {
  const { packed, viewerIds } = candidates;
  const N = viewerIds.length;
  const n = segments.length;
  if (packed.length !== N * BYTES) throw new RangeError(`${packed.length} packed bytes for ${N} candidates`);
  const folded = foldSegments(segments);
  const { readout } = folded;
  const none: MatchResult = {
    classification: 'no_match',
    falsePositiveProbability: 1,
    confusionProbability: 1,
    binaryId: readout,
    readout,
    supportedBits: 0,
    candidates: N,
    segments: n,
  };
  if (N === 0) return none;

  const { best, bestScore, second, secondScore } = rankCandidates(packed, N, folded, n);
  // Past ~38σ exp underflows to 0: read it as "below 1e-300", which every threshold treats alike.
  const falsePositiveProbability = bestScore > 0 ? Math.min(1, N * Math.exp((-bestScore * bestScore) / 2)) : 1;
  const winner: Candidate = { viewerId: viewerIds[best] as string, binaryId: binaryIdAt(packed, best) };
  const confusion = confusionProbability(packed, N, best, winner, folded);
  const contradictions = contradictionsOf(segments, winner.binaryId);
  const classification = classify(n, falsePositiveProbability, confusion, contradictions);
  if (classification === 'no_match') return { ...none, falsePositiveProbability, confusionProbability: confusion };

  const runner = second >= 0 ? { viewerId: viewerIds[second] as string } : undefined;
  const { binaryId, supportedBits } = matchedBinaryId(readout, winner.binaryId);
  return {
    classification,
    matched: { viewerId: winner.viewerId, binaryId: winner.binaryId, score: bestScore, contradictions },
    ...(runner ? { runnerUp: { viewerId: runner.viewerId, score: secondScore } } : {}),
    falsePositiveProbability,
    confusionProbability: confusion,
    binaryId,
    readout,
    supportedBits,
    candidates: N,
    segments: n,
  };
}
