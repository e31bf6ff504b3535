import { ID_BITS } from '../watermark/segments.js';

/**
 * What a leak says about each of the 40 bit positions, from the detector's per-segment scores.
 * Segment s carries bit s mod 40, so a leak longer than 40 segments reads some positions twice.
 *
 * A position reads A (0) or B (1) when its segments' clipped z, summed and divided by √n, is
 * beyond ±DECIDED_Z and no segment of it is decided firmly the other way; `both` when one of its
 * segments is decided firmly A and another firmly B (one copy cannot do that: it was served one
 * variant per position, so two sources were spliced); `unread` otherwise (too faint, absent, or an
 * average of copies whose opposite marks cancel there).
 */

/** Beyond 20σ a score is saturated evidence: a glitching segment must not outweigh the rest. */
export const Z_CLIP = 20;

/** A |z| this large decides a bit (and a segment) on its own. */
export const DECIDED_Z = 4;

export type PositionReading = 'A' | 'B' | 'both' | 'unread';

export interface Readings {
  /** one per bit position */
  positions: PositionReading[];
  /** the positions read A or B, in increasing order */
  decided: number[];
  /** positions read both ways by different segments */
  both: number[];
  /** per position: the summed clipped z over √n (0 where no segment carries it) */
  z: Float64Array;
  /** per position: how many segments of the leak carry it */
  count: Float64Array;
  /** per position: the summed clipped z (what the mark figure adds up) */
  sum: Float64Array;
  /** '0' (A), '1' (B) or '?' per position: the bits the leak decides on its own */
  readout: string;
  /** the highest segment index the leak holds (-1 when it holds none): further segments come after it */
  lastSegment: number;
}

export const clip = (z: number) => (z > Z_CLIP ? Z_CLIP : z < -Z_CLIP ? -Z_CLIP : z);

function checkSegments(segments: readonly { index: number; z: number }[]): void {
  const seen = new Set<number>();
  for (const s of segments) {
    // A repeated segment would count its evidence twice and break the independence the bounds need.
    if (!Number.isInteger(s.index) || s.index < 0 || seen.has(s.index)) {
      throw new RangeError(`segment index ${s.index} is not a new non-negative integer`);
    }
    if (Number.isNaN(s.z)) throw new RangeError(`segment ${s.index} has no score`);
    seen.add(s.index);
  }
}

export function readPositions(segments: readonly { index: number; z: number }[]): Readings {
  checkSegments(segments);
  const sum = new Float64Array(ID_BITS);
  const count = new Float64Array(ID_BITS);
  const firmA = new Uint8Array(ID_BITS);
  const firmB = new Uint8Array(ID_BITS);
  let lastSegment = -1;
  for (const s of segments) {
    const b = s.index % ID_BITS;
    const z = clip(s.z);
    sum[b] = (sum[b] as number) + z;
    count[b] = (count[b] as number) + 1;
    if (z >= DECIDED_Z) firmA[b] = 1;
    if (z <= -DECIDED_Z) firmB[b] = 1;
    lastSegment = Math.max(lastSegment, s.index);
  }
  const z = new Float64Array(ID_BITS);
  const positions: PositionReading[] = [];
  const decided: number[] = [];
  const both: number[] = [];
  let readout = '';
  for (let b = 0; b < ID_BITS; b++) {
    const n = count[b] as number;
    const folded = n === 0 ? 0 : (sum[b] as number) / Math.sqrt(n);
    z[b] = folded;
    let reading: PositionReading = 'unread';
    if (firmA[b] && firmB[b]) reading = 'both';
    else if (folded >= DECIDED_Z && !firmB[b]) reading = 'A';
    else if (folded <= -DECIDED_Z && !firmA[b]) reading = 'B';
    positions.push(reading);
    if (reading === 'both') both.push(b);
    if (reading === 'A' || reading === 'B') decided.push(b);
    readout += reading === 'A' ? '0' : reading === 'B' ? '1' : '?';
  }
  return { positions, decided, both, z, count, sum, readout, lastSegment };
}

/**
 * The chance that a position's reading is wrong, were the copy from one source: the Gaussian tail
 * beyond its |z| (the calibrated z is standard normal around the mark's strength). Used for the
 * candidates' posterior only; the identification figure does not rest on it.
 */
export function misreadChance(z: number): number {
  return Math.max(1e-300, 0.5 * erfc(Math.abs(z) / Math.SQRT2));
}

/** erfc by the Chebyshev fit of Numerical Recipes (relative error below 1.2e-7). */
function erfc(x: number): number {
  const t = 1 / (1 + 0.5 * Math.abs(x));
  const poly =
    -x * x -
    1.26551223 +
    t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const r = t * Math.exp(poly);
  return x >= 0 ? r : 2 - r;
}
