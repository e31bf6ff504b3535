import { ID_BITS } from '../../../watermark/segments.js';
import { fitOf, listed, separate } from './candidate-set.js';
import { mixedOrNone } from './mixed-copy.js';
import { identificationBound, levelCensus, othersThan } from './id-levels.js';
import { binaryIdAt, type Candidate, type PackedCandidates, packCandidates } from './packed-ids.js';
import { clip, DECIDED_Z, readPositions, type Segment } from './readings.js';
import { markProbability, scanCandidates } from './scan.js';
import { blank, type Facts, type MatchOptions, type MatchResult, STRONG_BELOW, STRONG_FP, WEAK_FP } from './verdict.js';

export { DECIDED_Z } from './readings.js';
export * from './verdict.js';

/**
 * The verdict on a leak: the detector's per-segment scores against every candidate's permanent id
 * (DESIGN.md, "What a verdict may claim"). Two figures, each answering its own question:
 *
 * The mark figure: is a mark of this content in the copy at all? If none were, each segment's
 * z = Σ p·m / √(Σ m²) has fair independent pattern signs p, so E exp(λz) ≤ exp(λ²/2) (Hoeffding) and
 * z is symmetric; clipping to ±Z_CLIP keeps that. For any fixed signs σ the score S = Σ σ(s)·z_s / √n
 * is sub-Gaussian with variance proxy 1, and the best of N candidates scores S by chance with
 * probability at most N·exp(−S²/2). It can be astronomically small, and says nothing about who.
 *
 * The identification figure: could the person named be innocent? A segment decides at most one
 * bit, so the evidence against one person is what the decided bit positions carry: a bound on the
 * chance that an innocent candidate's id shows the decided bits, whoever made the copy
 * (./id-levels.ts). A read error or a coalition that spells someone else's bits can only name an
 * innocent who fits, so this bounds both.
 *
 * strong_match: one candidate alone fits every decided bit, no segment is decided against them, the
 * mark figure is below STRONG_FP and the identification figure at most `strongBelow`. weak_match:
 * candidates fit, but not so: the result is the set, nobody is named. mixed_copy: no single viewer
 * explains the readings (a position read both ways, or nobody fits while a coalition of 2 or 3 does).
 * no_match: no mark, nothing decided, or nothing explains the readings.
 */

/** The variant the viewer was served on a segment, as the sign its score should take: A (bit 0) is +1. */
export function signFor(binaryId: string, segment: number): 1 | -1 {
  return binaryId[segment % ID_BITS] === '0' ? 1 : -1;
}

/** Segments decided firmly against the variant the viewer was served. */
function contradictionsOf(segments: readonly Segment[], binaryId: string): number {
  let contradictions = 0;
  for (const s of segments) {
    const z = clip(s.z);
    if (Math.abs(z) >= DECIDED_Z && Math.sign(z) !== signFor(binaryId, s.index)) contradictions++;
  }
  return contradictions;
}

export function matchCandidates(
  segments: readonly Segment[],
  candidates: readonly Candidate[],
  options: MatchOptions,
): MatchResult {
  return matchPackedCandidates(segments, packCandidates(candidates), options);
}

/**
 * The verdict, on candidates packed once (packCandidates, CandidatePacker): a million read from the database, or one
 * population matched many times.
 */
export function matchPackedCandidates(
  segments: readonly Segment[],
  candidates: PackedCandidates,
  options: MatchOptions,
): MatchResult {
  const N = candidates.viewerIds.length;
  const strongBelow = options.strongBelow ?? STRONG_BELOW;
  const readings = readPositions(segments);
  const scan = scanCandidates(candidates, readings, segments.length);
  const census = options.census
    ? { ...options.census, counts: [...options.census.counts] }
    : levelCensus(candidates, options.mask);
  const standIns = new Set(
    (options.standIns ?? []).map((id) => candidates.viewerIds.indexOf(id)).filter((c) => c >= 0),
  );
  for (const c of standIns)
    census.counts[census.levelOf[c] as number] = (census.counts[census.levelOf[c] as number] as number) - 1;
  const facts: Facts = { segments, candidates, readings, scan, census, strongBelow, standIns };
  const mark = N === 0 ? 1 : markProbability(scan.bestScore, N);
  const none = (reason: string): MatchResult => ({ ...blank(facts, mark), reason });
  if (N === 0) return none('nobody streamed this content marked');
  if (segments.length === 0) return none('the leak holds no segment of the content');
  if (mark > WEAK_FP) return none('the copy does not carry this content’s mark clearly enough');
  const { decided, both } = readings;
  if (decided.length === 0 && both.length === 0) return none('no bit position is decided');
  if (both.length > 0 || readings.erased.length > 0 || scan.fitting.length === 0) return mixedOrNone(facts, mark);
  const [only] = scan.fitting;
  if (scan.fitting.length === 1 && facts.standIns.has(only as number)) {
    return {
      ...none('the copy reads as one that stands for no viewer'),
      standIn: candidates.viewerIds[only as number] as string,
    };
  }
  return singleSource(facts, mark);
}

/**
 * The identification figure were one of the fitting candidates named: the others are the possible
 * innocents. Taken at the worst of their levels, so that it never depends on candidate order.
 */
function identificationOf(facts: Facts): number {
  const { census, scan, readings } = facts;
  const byLevel = new Map<number, number>();
  for (const c of scan.fitting) if (!facts.standIns.has(c)) byLevel.set(census.levelOf[c] as number, c);
  if (byLevel.size === 0) return identificationBound(census.counts, readings.decided);
  return Math.max(...[...byLevel.values()].map((c) => identificationBound(othersThan(census, c), readings.decided)));
}

function singleSource(facts: Facts, mark: number): MatchResult {
  const { candidates, scan, readings, segments } = facts;
  const identification = identificationOf(facts);
  const base = {
    ...blank(facts, mark),
    identificationProbability: identification,
    supportedBits: readings.decided.length,
  };
  if (scan.fitting.length === 1) {
    const c = scan.fitting[0] as number;
    const binaryId = binaryIdAt(candidates.packed, c);
    const contradictions = contradictionsOf(segments, binaryId);
    if (identification <= facts.strongBelow && mark <= STRONG_FP && contradictions === 0) {
      const named = { viewerId: candidates.viewerIds[c] as string, binaryId, score: scan.bestScore, contradictions };
      const filled = [...readings.readout].map((r, b) => (r === '?' ? binaryId[b] : r)).join('');
      return {
        ...base,
        classification: 'strong_match',
        matched: named,
        binaryId: filled,
        segmentsToSeparate: 0,
        segmentsToName: 0,
        reason: strongReason(facts),
      };
    }
  }
  const shown = listed(candidates, scan.fitting);
  const person = [...scan.fitting].find((c) => !facts.standIns.has(c));
  const others = person === undefined ? facts.census.counts : othersThan(facts.census, person);
  const apart = separate(candidates, scan.fitting, shown, readings, others, facts.strongBelow);
  return {
    ...base,
    classification: 'weak_match',
    candidateSet: shown.map((c, i) => fitOf(candidates, scan, readings, c, apart.each[i] ?? null)),
    segmentsToSeparate: apart.all,
    segmentsToName: apart.toName,
    reason: weakReason(facts, identification, mark),
  };
}

function strongReason(facts: Facts): string {
  const N = facts.candidates.viewerIds.length;
  const k = facts.readings.decided.length;
  return N === 1
    ? `the one viewer who streamed this content marked fits all ${k} decided bits`
    : `one viewer alone of ${N} fits all ${k} decided bits, and an innocent fits them ` +
        `with chance below ${facts.strongBelow}`;
}

function weakReason(facts: Facts, identification: number, mark: number): string {
  const F = facts.scan.fitting.length;
  const k = facts.readings.decided.length;
  if (F > 1) return `${F} candidates fit all ${k} decided bits: nobody is named`;
  if (mark > STRONG_FP) return `the mark is too faint to name anyone (${mark.toExponential(1)} above ${STRONG_FP})`;
  if (identification > facts.strongBelow)
    return (
      `one candidate fits the ${k} decided bits, but an innocent would fit them with ` +
      `chance up to ${identification.toExponential(1)}`
    );
  return 'one candidate fits, but a segment is decided against them';
}
