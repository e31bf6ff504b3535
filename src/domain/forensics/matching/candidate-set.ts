import { ID_BITS } from '../../../watermark/segments.js';
import { identificationBound } from './id-levels.js';
import { binaryIdAt, bitAt, type PackedCandidates } from './packed-ids.js';
import type { Readings } from './readings.js';
import type { Scan } from './scan.js';

/**
 * The viewers a weak result points at, without naming any one of them: each one's agreement with
 * the decided bits, their posterior (were the copy from one of them), and how many further segments
 * of the film a leak would need to hold to tell them apart.
 */

/** A weak result lists at most this many candidates; it always says how many fit. */
export const LISTED = 20;

/** How far ahead `segmentsToSeparate` and `segmentsToName` look: one full cycle of positions. */
const LOOKAHEAD = ID_BITS;

export interface CandidateFit {
  viewerId: string;
  binaryId: string;
  /** decided positions its id agrees with (all of them for a candidate that fits) */
  agreement: number;
  /** its probability of being the source, were the copy from one viewer, all candidates alike beforehand */
  posterior: number;
  /**
   * further segments after the leak's last one that would tell it apart from every other candidate that fits; null
   * beyond one cycle
   */
  separatingSegments: number | null;
}

export interface Separation {
  /** further segments until every fitting candidate is told apart; null beyond one cycle */
  all: number | null;
  /** per listed candidate (the order of `listed`) */
  each: (number | null)[];
  /** further segments until, read the way of one of them, a strong match would be allowed; null beyond one cycle */
  toName: number | null;
}

/** Whether every key differs from every other (a sorted copy, so that half a million keys take milliseconds). */
function allDistinct(keys: Float64Array): boolean {
  const sorted = Float64Array.from(keys).sort();
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return false;
  return true;
}

/**
 * Walks the coming segments one by one, extending every fitting candidate's key by its bit there,
 * until the keys are all distinct. A position already decided tells nobody apart (they all agree
 * on it), but its segment still counts as one more to watch. Each listed candidate keeps the
 * fitting candidates that still share its key, fewer at every step.
 */
export function separate(
  candidates: PackedCandidates,
  fitting: Int32Array,
  listed: readonly number[],
  readings: Readings,
  counts: readonly number[],
  strongBelow: number,
): Separation {
  const { packed } = candidates;
  const keys = new Float64Array(fitting.length);
  const sharers = listed.map((c) => fitting.filter((other) => other !== c));
  const each: (number | null)[] = sharers.map((left) => (left.length === 0 ? 0 : null));
  const positions = new Set(readings.decided);
  // F keys need ⌈log2 F⌉ bits to differ at all: no need to look before that
  const earliest = Math.ceil(Math.log2(Math.max(1, fitting.length)));
  let added = 0;
  let all: number | null = fitting.length <= 1 ? 0 : null;
  let toName: number | null = all === 0 && identificationBound(counts, readings.decided) <= strongBelow ? 0 : null;
  const steps = readings.upcoming.slice(0, LOOKAHEAD);
  for (let step = 1; step <= steps.length && (all === null || toName === null || each.includes(null)); step++) {
    const b = steps[step - 1] as number;
    if (!positions.has(b)) {
      positions.add(b);
      added++;
      fitting.forEach((c, i) => {
        keys[i] = (keys[i] as number) * 2 + bitAt(packed, c, b);
      });
      listed.forEach((c, i) => {
        if (each[i] !== null) return;
        const mine = bitAt(packed, c, b);
        sharers[i] = (sharers[i] as Int32Array).filter((other) => bitAt(packed, other, b) === mine);
        if ((sharers[i] as Int32Array).length === 0) each[i] = step;
      });
      if (all === null && added >= earliest && allDistinct(keys)) all = step;
    }
    if (all !== null && toName === null && identificationBound(counts, [...positions]) <= strongBelow) toName = step;
  }
  return { all, each, toName };
}

/**
 * The candidates a weak result lists: those that fit, by viewer id (they are alike in every figure), at most LISTED.
 */
export function listed(candidates: PackedCandidates, fitting: Int32Array): number[] {
  const ids = candidates.viewerIds;
  return [...fitting].sort((a, b) => ((ids[a] as string) < (ids[b] as string) ? -1 : 1)).slice(0, LISTED);
}

export function fitOf(
  candidates: PackedCandidates,
  scan: Scan,
  readings: Readings,
  c: number,
  separatingSegments: number | null,
): CandidateFit {
  return {
    viewerId: candidates.viewerIds[c] as string,
    binaryId: binaryIdAt(candidates.packed, c),
    agreement: readings.decided.length - (scan.misses[c] as number),
    posterior: Math.exp((scan.logLikelihood[c] as number) - scan.logTotal),
    separatingSegments,
  };
}
