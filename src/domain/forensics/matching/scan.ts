import { ID_BITS } from '../../../watermark/segments.js';
import { BYTES, byteTable, type PackedCandidates } from './packed-ids.js';
import { misreadChance, type Readings } from './readings.js';

/**
 * One pass over every candidate: the mark score, who fits every decided bit, how many decided bits
 * each misses, and each one's log-likelihood were the copy from that one viewer. Byte tables turn
 * each of these into five look-ups per candidate, so a million candidates take tens of milliseconds.
 */

export interface Scan {
  /** the best candidate's score S = Σ σ·z / √n (the mark figure is N·exp(−S²/2)) */
  bestScore: number;
  /** candidates that agree with every decided position, in candidate order */
  fitting: Int32Array;
  /** per candidate: decided positions it disagrees with */
  misses: Uint8Array;
  /** per candidate: log-likelihood of the decided readings, were it the one source */
  logLikelihood: Float64Array;
  /** log of the sum of exp(logLikelihood) over all candidates: the posterior's denominator */
  logTotal: number;
}

/** The decided word and positions as a packed id's bytes (character 8j of the binaryId is byte j's top bit). */
export function packedMask(readings: Readings): { word: Uint8Array; decided: Uint8Array } {
  const word = new Uint8Array(BYTES);
  const decided = new Uint8Array(BYTES);
  for (const b of readings.decided) {
    const j = b >> 3;
    const bit = 0x80 >>> (b & 7);
    decided[j] = (decided[j] as number) | bit;
    if (readings.positions[b] === 'B') word[j] = (word[j] as number) | bit;
  }
  return { word, decided };
}

const POPCOUNT = Uint8Array.from({ length: 256 }, (_, v) => {
  let n = 0;
  for (let x = v; x; x &= x - 1) n++;
  return n;
});

/** Per position: what a disagreement there costs a candidate's log-likelihood, and the log of agreeing everywhere. */
function likelihoodWeights(readings: Readings): { perMiss: Float64Array; allAgree: number } {
  const perMiss = new Float64Array(ID_BITS);
  let allAgree = 0;
  for (const b of readings.decided) {
    const e = misreadChance(readings.z[b] as number);
    perMiss[b] = Math.log(e) - Math.log1p(-e);
    allAgree += Math.log1p(-e);
  }
  return { perMiss, allAgree };
}

/** Every candidate's score, fit, misses and likelihood, in one pass. */
export function scanCandidates(candidates: PackedCandidates, readings: Readings, segments: number): Scan {
  const { packed } = candidates;
  const N = candidates.viewerIds.length;
  // σ is +1 on a 0-bit and −1 on a 1-bit, so Σ σ·z = Σ z − 2·(Σ z over the candidate's 1-bits).
  let total = 0;
  for (let b = 0; b < ID_BITS; b++) total += readings.sum[b] as number;
  const onesSum = byteTable(readings.sum);
  const invSqrtN = segments === 0 ? 0 : 1 / Math.sqrt(segments);
  const { word, decided } = packedMask(readings);
  const { perMiss, allAgree } = likelihoodWeights(readings);
  const missCost = byteTable(perMiss);
  const misses = new Uint8Array(N);
  const logLikelihood = new Float64Array(N);
  const fitting: number[] = [];
  let bestScore = N === 0 ? 0 : Number.NEGATIVE_INFINITY;
  let maxLl = Number.NEGATIVE_INFINITY;
  for (let c = 0; c < N; c++) {
    const o = c * BYTES;
    let ones = 0;
    let miss = 0;
    let ll = allAgree;
    for (let j = 0; j < BYTES; j++) {
      const v = packed[o + j] as number;
      ones += onesSum[j * 256 + v] as number;
      const off = (v ^ (word[j] as number)) & (decided[j] as number);
      miss += POPCOUNT[off] as number;
      ll += missCost[j * 256 + off] as number;
    }
    const score = (total - 2 * ones) * invSqrtN;
    if (score > bestScore) bestScore = score;
    misses[c] = miss;
    logLikelihood[c] = ll;
    if (ll > maxLl) maxLl = ll;
    if (miss === 0) fitting.push(c);
  }
  let acc = 0;
  for (let c = 0; c < N; c++) acc += Math.exp((logLikelihood[c] as number) - maxLl);
  return {
    bestScore,
    fitting: Int32Array.from(fitting),
    misses,
    logLikelihood,
    logTotal: N === 0 ? 0 : maxLl + Math.log(acc),
  };
}

/** The chance, if nothing of this content's mark were in the copy, that any of N candidates scores S or more. */
export function markProbability(bestScore: number, N: number): number {
  // Past ~38σ exp underflows to 0: read it as "below 1e-300", which every threshold treats alike.
  return bestScore > 0 ? Math.min(1, N * Math.exp((-bestScore * bestScore) / 2)) : 1;
}
