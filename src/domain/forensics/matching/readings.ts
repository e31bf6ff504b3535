import { flippedAt, positionOf, type SegmentRule } from '../../../watermark/segment-rule.js';
import { ID_BITS } from '../../../watermark/segments.js';

/**
 * What a leak says about each of the 40 bit positions, from the detector's per-segment scores.
 * The content's rule says which position each segment carries and whether its variant is flipped
 * there (../../../watermark/segment-rule.ts); the pattern repeats every 40 segments, so a leak
 * longer than 40 segments reads some positions twice. Below, a segment's z is taken in the id's
 * terms (positive for bit 0): the detector's z (positive for variant A), negated where the rule flips.
 *
 * A position reads A (0) or B (1) when its segments' clipped z, summed and divided by √n, is
 * beyond ±DECIDED_Z and no segment of it is decided firmly the other way; `both` when one of its
 * segments is decided firmly A and another firmly B (one copy cannot do that: it was served one
 * variant per position, so two sources were spliced); `erased` when its segments read nothing
 * although the rest of the leak says they should read a lot (variants A and B are opposite marks:
 * an average of two copies that differ there cancels them, see ERASED_EXPECTED); `unread` otherwise
 * (too faint, or absent).
 */

/**
 * A segment is erased when a single copy would read |z| ≥ this there (its reach times the leak's
 * median |z| per reach, over its decided segments) and it reads below ERASED_BELOW: over five
 * times fainter than the leak's own attenuation says (a 5σ shortfall besides), far past what
 * re-encoding varies by from one segment to the next.
 */
export const ERASED_EXPECTED = 8;
const ERASED_BELOW = 1.5;
/** The leak's attenuation is taken from at least this many decided segments with a reach (the lower median of them). */
const ATTENUATION_FROM = 2;
/**
 * A segment can read as erased only if the leak covers at least this share of what it covers of its decided
 * segments (their median): a few stray frames at a clip's edge read nothing because they hold little of the mark.
 */
const ERASED_COVERAGE = 0.5;

/** Beyond 20σ a score is saturated evidence: a glitching segment must not outweigh the rest. */
export const Z_CLIP = 20;

/** A |z| this large decides a bit (and a segment) on its own. */
export const DECIDED_Z = 4;

export type PositionReading = 'A' | 'B' | 'both' | 'erased' | 'unread';

/** One segment as the detector read it. */
export interface Segment {
  index: number;
  /** positive for variant A */
  z: number;
  /** what |z| a single copy reads here per unit of the leak's attenuation (video), when known */
  reach?: number;
  /** seconds of the leak that fell in this segment, when known */
  coverage?: number;
}

/** A segment in the id's terms: the position it carries, and z positive for bit 0. */
export interface BitReading extends Segment {
  position: number;
}

/** The segments in the id's terms under the content's rule. */
export function inIdTerms(segments: readonly Segment[], rule: SegmentRule): BitReading[] {
  return segments.map((s) => ({
    ...s,
    position: positionOf(rule, s.index),
    z: flippedAt(rule, s.index) ? -s.z : s.z,
  }));
}

export interface Readings {
  /** one per bit position */
  positions: PositionReading[];
  /** the positions read A or B, in increasing order */
  decided: number[];
  /** positions read both ways by different segments */
  both: number[];
  /** positions whose segments lost a mark they should carry: an average of opposite marks */
  erased: number[];
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
  /** the positions the 40 segments after the leak's last one carry, in order */
  upcoming: number[];
}

export const clip = (z: number) => (z > Z_CLIP ? Z_CLIP : z < -Z_CLIP ? -Z_CLIP : z);

function checkSegments(segments: readonly Segment[]): void {
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

const lowerMedian = (values: number[]) => values.sort((a, b) => a - b)[(values.length - 1) >> 1] as number;

/** The leak's attenuation κ: a single copy reads |z| ≈ κ·reach (the lower median over its decided segments). */
function attenuationOf(segments: readonly Segment[]): number | undefined {
  const decided = segments.filter((s) => (s.reach ?? 0) > 0 && Math.abs(s.z) >= DECIDED_Z);
  if (decided.length < ATTENUATION_FROM) return undefined;
  return lowerMedian(decided.map((s) => Math.abs(s.z) / (s.reach as number)));
}

/** Below this a decision is faint whatever the leak's strength: without a mark, |z| ≥ 5 comes once in 1.7·10⁶. */
const FAINT_Z = 5;

/**
 * Segments whose decisions are faint: a segment that decides a bit below FAINT_Z, or under half of
 * what the leak's attenuation says a mark there reads, and every segment of a position whose folded
 * reading decides it below FAINT_Z (two segments without a mark reading 2.9 and 3.3 decide one at
 * 4.4). A stretch without a mark gives such readings by chance (it reads standard normal, beyond ±4
 * once in some 16,000 segments); another copy's segments read at full strength.
 */
export function faintDecisions(detected: readonly Segment[], rule: SegmentRule): Set<number> {
  const segments = inIdTerms(detected, rule);
  const kappa = attenuationOf(segments) ?? 0;
  const faint = (s: Segment) => Math.abs(s.z) < FAINT_Z || Math.abs(s.z) < (kappa * (s.reach ?? 0)) / 2;
  const found = new Set(segments.filter((s) => Math.abs(s.z) >= DECIDED_Z && faint(s)).map((s) => s.index));
  const sum = new Float64Array(ID_BITS);
  const count = new Float64Array(ID_BITS);
  for (const s of segments) {
    sum[s.position] = (sum[s.position] as number) + clip(s.z);
    count[s.position] = (count[s.position] as number) + 1;
  }
  const folded = (b: number) => Math.abs(sum[b] as number) / Math.sqrt(Math.max(1, count[b] as number));
  for (const s of segments) if (folded(s.position) >= DECIDED_Z && folded(s.position) < FAINT_Z) found.add(s.index);
  return found;
}

/**
 * The segments that should read |z| ≥ ERASED_EXPECTED but read almost nothing, over enough of the
 * segment to be evidence comparable to a decided bit.
 */
function erasedSegments(segments: readonly Segment[]): Set<number> {
  const kappa = attenuationOf(segments);
  if (kappa === undefined) return new Set();
  const decided = segments.filter((s) => (s.reach ?? 0) > 0 && Math.abs(s.z) >= DECIDED_Z);
  const covered = decided.flatMap((s) => (s.coverage === undefined ? [] : [s.coverage]));
  const floor = covered.length === 0 ? 0 : ERASED_COVERAGE * lowerMedian(covered);
  return new Set(
    segments
      .filter((s) => kappa * (s.reach ?? 0) >= ERASED_EXPECTED && Math.abs(s.z) < ERASED_BELOW)
      .filter((s) => s.coverage === undefined || s.coverage >= floor)
      .map((s) => s.index),
  );
}

/** The readings of a leak's segments (the detector's z) under the content's rule. */
export function readPositions(detected: readonly Segment[], rule: SegmentRule): Readings {
  checkSegments(detected);
  const segments = inIdTerms(detected, rule);
  const lost = erasedSegments(segments);
  const erasedAt = new Uint8Array(ID_BITS);
  for (const s of segments) if (lost.has(s.index)) erasedAt[s.position] = 1;
  const sum = new Float64Array(ID_BITS);
  const count = new Float64Array(ID_BITS);
  const firmA = new Uint8Array(ID_BITS);
  const firmB = new Uint8Array(ID_BITS);
  let lastSegment = -1;
  for (const s of segments) {
    const b = s.position;
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
  const erased: number[] = [];
  let readout = '';
  for (let b = 0; b < ID_BITS; b++) {
    const n = count[b] as number;
    const folded = n === 0 ? 0 : (sum[b] as number) / Math.sqrt(n);
    z[b] = folded;
    let reading: PositionReading = 'unread';
    if (firmA[b] && firmB[b]) reading = 'both';
    else if (folded >= DECIDED_Z && !firmB[b]) reading = 'A';
    else if (folded <= -DECIDED_Z && !firmA[b]) reading = 'B';
    else if (erasedAt[b] && !firmA[b] && !firmB[b]) reading = 'erased';
    positions.push(reading);
    if (reading === 'both') both.push(b);
    if (reading === 'erased') erased.push(b);
    if (reading === 'A' || reading === 'B') decided.push(b);
    readout += reading === 'A' ? '0' : reading === 'B' ? '1' : '?';
  }
  const upcoming = Array.from({ length: ID_BITS }, (_, i) => positionOf(rule, lastSegment + 1 + i));
  return { positions, decided, both, erased, z, count, sum, readout, lastSegment, upcoming };
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
    t *
      (1.00002368 +
        t *
          (0.37409196 +
            t *
              (0.09678418 +
                t *
                  (-0.18628806 +
                    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const r = t * Math.exp(poly);
  return x >= 0 ? r : 2 - r;
}
