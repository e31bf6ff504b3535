import type { SegmentRule } from '../../../watermark/segment-rule.js';
import type { CandidateFit } from './candidate-set.js';
import type { LevelCensus } from './id-levels.js';
import type { PackedCandidates } from './packed-ids.js';
import type { Readings, Segment } from './readings.js';
import type { Scan } from './scan.js';

// What a verdict is made of and what it says (./matching.ts decides it; docs/forensics.md, "What a verdict may claim").

/** One in a billion even across every candidate: the copy carries this content's mark. */
export const STRONG_FP = 1e-9;

/** Over 1,000 analyses of unmarked or wrong content the expected number of findings is 0.1. */
export const WEAK_FP = 1e-4;

/** The default bound on the identification figure for naming anyone (`--strong-below`). */
export const STRONG_BELOW = 1e-6;

export type Classification = 'strong_match' | 'weak_match' | 'mixed_copy' | 'no_match';

/** A viewer a mixed copy implicates: in every least coalition that explains the readings. */
export interface Suspect extends CandidateFit {
  /** were this viewer innocent, the chance that their id would let them complete such a coalition */
  bound: number;
}

export interface MixedCopy {
  /** positions read A in one segment and B in another */
  bothPositions: number[];
  /** the fewest viewers whose copies explain every reading: 2 or 3, or null when no coalition of at most 3 was found */
  leastSources: 2 | 3 | null;
  /**
   * the viewers in every one of those coalitions, each with its own bound, listed only when an innocent would be
   * among them with chance at most WEAK_FP (implicationProbability); empty otherwise
   */
  suspects: Suspect[];
  /** positions whose segments lost a mark they should carry (an average of opposite marks) */
  erasedPositions: number[];
  /** the suspects are named: an averaged pair that innocents explain with chance ≤ strongBelow */
  named: boolean;
  /** the identification figure for the pair (the chance that an innocent completes it), when a pair was weighed */
  pairProbability: number | null;
  /** how many coalitions of that size explain the readings (a lower bound unless `exhaustive`) */
  coalitionsFound: number;
  /** whether every coalition of that size was counted */
  exhaustive: boolean;
  /** how many viewers are in every one of them (the suspects, if the figure allows) */
  inEveryCoalition: number;
  /** the chance that an innocent would be in every one of them; null where it was not computed */
  implicationProbability: number | null;
}

export interface MatchResult {
  classification: Classification;
  /** the one viewer a strong match names; absent otherwise */
  matched?: { viewerId: string; binaryId: string; score: number; contradictions: number };
  /** the mark figure (see above) */
  markProbability: number;
  /**
   * the identification figure: for a strong match, the chance that the named is innocent; otherwise what naming the
   * best fit would risk
   */
  identificationProbability: number;
  strongBelow: number;
  /** candidates whose ids agree with every decided position */
  fitting: number;
  /** weak_match: the candidates that fit (at most LISTED, by viewer id) */
  candidateSet: CandidateFit[];
  /** further segments that would tell every fitting candidate apart (null: more than one cycle of 40) */
  segmentsToSeparate: number | null;
  /** further segments after which, read one candidate's way, a strong match would be allowed */
  segmentsToName: number | null;
  mixed: MixedCopy | null;
  /** the named viewer's id with the leak's decided bits; otherwise the read-out */
  binaryId: string;
  /** the bits the leak itself decides, `?` elsewhere */
  readout: string;
  decidedBits: number;
  /** decided bits that agree with whoever the result points at (0 when nobody fits) */
  supportedBits: number;
  candidates: number;
  segments: number;
  /** the best candidate's score S, behind the mark figure */
  score: number | null;
  /** why this classification, in one sentence */
  reason: string;
  /** no_match: the one candidate that fits stands for no person (MatchOptions.standIns) */
  standIn?: string;
}

export interface MatchOptions {
  /** the secret mask of the viewer-id key (src/domain/identity/viewer-ids.ts): it places each id in its level */
  mask: bigint;
  /** the content's segment rule: which bit of an id each segment carries, and as which variant */
  rule: SegmentRule;
  strongBelow?: number;
  /**
   * candidates that stand for no person (the plain copy of unmarked sessions): never counted among the possible
   * innocents
   */
  standIns?: readonly string[];
  /** levelCensus(candidates, mask), when the same candidates are matched many times (benchmarks) */
  census?: LevelCensus;
  /**
   * how many readings of the leak the detector scored before keeping the one with the most mark (the orientations
   * its pictures left plausible): the mark figure counts each, as a chance that any of them reads so by chance
   */
  readingsTried?: number;
}

/** What the matcher found out before it decides: the readings, one scan of the candidates, their levels. */
export interface Facts {
  /** as the detector read them (z positive for variant A) */
  segments: readonly Segment[];
  rule: SegmentRule;
  candidates: PackedCandidates;
  readings: Readings;
  scan: Scan;
  census: LevelCensus;
  strongBelow: number;
  /** candidates that stand for no person */
  standIns: Set<number>;
}

/** A no_match on these facts: the fields every verdict fills, before it says why. */
export function blank(facts: Facts, mark: number): Omit<MatchResult, 'reason'> {
  const { readings, candidates, segments, scan } = facts;
  return {
    classification: 'no_match',
    markProbability: mark,
    identificationProbability: 1,
    strongBelow: facts.strongBelow,
    fitting: scan.fitting.length,
    candidateSet: [],
    segmentsToSeparate: null,
    segmentsToName: null,
    mixed: null,
    binaryId: readings.readout,
    readout: readings.readout,
    decidedBits: readings.decided.length,
    supportedBits: 0,
    candidates: candidates.viewerIds.length,
    segments: segments.length,
    score: candidates.viewerIds.length === 0 ? null : scan.bestScore,
  };
}
