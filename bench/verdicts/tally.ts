import type { MatchResult } from '../../src/domain/forensics/matching/matching.js';

// What the verdicts of one family of leaks came to, and how the identification figure fared
// against the truth. The figure bounds the chance that some innocent fits every decided bit: over
// the leaks whose figure falls in one decade, how often did an innocent really fit?

export interface Tally {
  trials: number;
  strong: number;
  weak: number;
  mixed: number;
  none: number;
  /** strong matches that named a candidate whose copy did not go into the leak: the goal is 0 */
  innocentsNamed: number;
  /** strong matches that named a source */
  sourcesNamed: number;
  /** weak results whose candidate set holds no source at all */
  weakWithoutSource: number;
  /** mixed copies whose pair was named, and how many innocents such pairs held (the goal is 0) */
  pairsNamed: number;
  innocentsInPairs: number;
  /** viewers a mixed copy implicated (in every least coalition), and how many were innocents (the goal is 0) */
  implicated: number;
  innocentsImplicated: number;
  /** per decade of the identification figure (0: ≥ 0.1, 1: [0.01, 0.1), …, 7: below 1e-7): leaks with decided bits, and in how many an innocent fit them all */
  calibration: { leaks: number; innocent: number }[];
}

export const DECADES = 8;

export function emptyTally(): Tally {
  return {
    ...{
      trials: 0,
      strong: 0,
      weak: 0,
      mixed: 0,
      none: 0,
      innocentsNamed: 0,
      sourcesNamed: 0,
      weakWithoutSource: 0,
      pairsNamed: 0,
      innocentsInPairs: 0,
      implicated: 0,
      innocentsImplicated: 0,
    },
    calibration: Array.from({ length: DECADES }, () => ({ leaks: 0, innocent: 0 })),
  };
}

/** The decade of a figure: 0 for 0.1 and above, 7 for below 1e-7 (0 included). */
export function decadeOf(p: number): number {
  if (p <= 0) return DECADES - 1;
  return Math.min(DECADES - 1, Math.max(0, Math.floor(-Math.log10(p))));
}

/** `sourcesFitting`: how many of the leak's sources fit every decided bit (the rest of r.fitting are innocents). */
export function record(t: Tally, r: MatchResult, sources: ReadonlySet<string>, sourcesFitting: number): void {
  t.trials++;
  if (r.classification === 'strong_match') {
    t.strong++;
    if (sources.has(r.matched?.viewerId as string)) t.sourcesNamed++;
    else t.innocentsNamed++;
  } else if (r.classification === 'weak_match') {
    t.weak++;
    if (!r.candidateSet.some((c) => sources.has(c.viewerId)) && r.fitting <= r.candidateSet.length)
      t.weakWithoutSource++;
  } else if (r.classification === 'mixed_copy') {
    t.mixed++;
    const innocents = r.mixed?.suspects.filter((c) => !sources.has(c.viewerId)).length ?? 0;
    t.implicated += r.mixed?.suspects.length ?? 0;
    t.innocentsImplicated += innocents;
    if (r.mixed?.named) {
      t.pairsNamed++;
      t.innocentsInPairs += innocents;
    }
  } else t.none++;
  if (r.decidedBits > 0) {
    const bucket = t.calibration[decadeOf(r.identificationProbability)] as Tally['calibration'][number];
    bucket.leaks++;
    if (r.fitting > sourcesFitting) bucket.innocent++;
  }
}

export function merge(a: Tally, b: Tally): Tally {
  const sum = emptyTally();
  for (const k of [
    'trials',
    'strong',
    'weak',
    'mixed',
    'none',
    'innocentsNamed',
    'sourcesNamed',
    'weakWithoutSource',
    'pairsNamed',
    'innocentsInPairs',
    'implicated',
    'innocentsImplicated',
  ] as const)
    sum[k] = a[k] + b[k];
  sum.calibration = a.calibration.map((x, i) => ({
    leaks: x.leaks + (b.calibration[i]?.leaks ?? 0),
    innocent: x.innocent + (b.calibration[i]?.innocent ?? 0),
  }));
  return sum;
}
