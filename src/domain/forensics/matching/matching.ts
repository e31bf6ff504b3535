import { type SegmentRule, servedBit } from '../../../watermark/segment-rule.js';
import { fitOf, listed, separate } from './candidate-set.js';
import { averagedPair, mixedOrNone } from './mixed-copy.js';
import { identificationBound, levelCensus, othersThan } from './id-levels.js';
import { binaryIdAt, type Candidate, type PackedCandidates, packCandidates } from './packed-ids.js';
import { clip, DECIDED_Z, faintDecisions, readPositions, type Segment } from './readings.js';
import { markProbability, scanCandidates } from './scan.js';
import { blank, type Facts, type MatchOptions, type MatchResult, STRONG_BELOW, STRONG_FP, WEAK_FP } from './verdict.js';

export { DECIDED_Z } from './readings.js';
export * from './verdict.js';

/**
 * The verdict on a leak: the detector's per-segment scores against every candidate's permanent id
 * (docs/forensics.md, "What a verdict may claim"). Two figures, each answering its own question:
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

/** The variant the viewer was served on a segment, as the sign the detector's score should take: A is +1. */
export function signFor(binaryId: string, segment: number, rule: SegmentRule): 1 | -1 {
  return servedBit(rule, binaryId, segment) === 0 ? 1 : -1;
}

/** Segments decided firmly against the variant the viewer was served. */
function contradictionsOf(facts: Facts, binaryId: string): number {
  let contradictions = 0;
  for (const s of facts.segments) {
    const z = clip(s.z);
    if (Math.abs(z) >= DECIDED_Z && Math.sign(z) !== signFor(binaryId, s.index, facts.rule)) contradictions++;
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
  return verdictOn(segments, candidates, options, true);
}

/** The verdict; `faintRetry`: whether a copy that looks mixed is read again without its faint decisions (once). */
function verdictOn(
  segments: readonly Segment[],
  candidates: PackedCandidates,
  options: MatchOptions,
  faintRetry: boolean,
): MatchResult {
  const N = candidates.viewerIds.length;
  const strongBelow = options.strongBelow ?? STRONG_BELOW;
  const readings = readPositions(segments, options.rule);
  const scan = scanCandidates(candidates, readings, segments.length);
  const census = options.census
    ? { ...options.census, counts: [...options.census.counts] }
    : levelCensus(candidates, options.mask);
  const standIns = new Set(
    (options.standIns ?? []).map((id) => candidates.viewerIds.indexOf(id)).filter((c) => c >= 0),
  );
  for (const c of standIns)
    census.counts[census.levelOf[c] as number] = (census.counts[census.levelOf[c] as number] as number) - 1;
  const facts: Facts = { segments, rule: options.rule, candidates, readings, scan, census, strongBelow, standIns };
  const mark = N === 0 ? 1 : Math.min(1, (options.readingsTried ?? 1) * markProbability(scan.bestScore, N));
  const none = (reason: string): MatchResult => ({ ...blank(facts, mark), reason });
  if (N === 0) return none('nobody streamed this content marked');
  if (segments.length === 0) return none('the leak holds no segment of the content');
  if (mark > WEAK_FP) return none('the copy does not carry this content’s mark clearly enough');
  const { decided, both } = readings;
  if (decided.length === 0 && both.length === 0) return none('no bit position is decided');
  if (both.length > 0 || scan.fitting.length === 0)
    return (faintRetry && oneCopyAfterAll(facts, options)) || mixedOrNone(facts, mark);
  // Erased positions make a mixed copy only where an averaged pair explains them beyond chance; otherwise they are
  // stretches of one copy without a mark (from the master, or too few frames to read), not evidence of a mix.
  const averaged = averagedPair(facts, mark);
  if (averaged) return averaged;
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
 * A copy that looks mixed only through faint decisions (./readings.ts, faintDecisions): read without
 * them, is it one viewer's copy? A stretch without a mark reads beyond ±4 by chance now and then, and
 * that alone must not make one copy a mix; a real second copy's segments read at full strength.
 */
function oneCopyAfterAll(facts: Facts, options: MatchOptions): MatchResult | undefined {
  const faint = faintDecisions(facts.segments, facts.rule);
  if (faint.size === 0) return undefined;
  const rest = facts.segments.filter((s) => !faint.has(s.index));
  const again = verdictOn(rest, facts.candidates, options, false);
  if (again.classification !== 'strong_match' && again.classification !== 'weak_match') return undefined;
  const note = `${faint.size} segment(s) decided faintly, far below the mark's strength, were read as unmarked`;
  const dropped = facts.segments.filter((s) => faint.has(s.index));
  const against = again.matched ? contradictionsOf({ ...facts, segments: dropped }, again.matched.binaryId) : 0;
  if (against === 0) return { ...again, segments: facts.segments.length, reason: `${again.reason}; ${note}` };
  // a faint segment against the one who fits may be a second copy's: the one who fits is listed, never named
  const listed = verdictOn(rest, facts.candidates, { ...options, strongBelow: -1 }, false);
  return {
    ...listed,
    strongBelow: facts.strongBelow,
    segments: facts.segments.length,
    reason:
      `one candidate fits the ${listed.decidedBits} decided bits, but ${against} faint segment(s) read against ` +
      `them: nobody is named; ${note}`,
  };
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
  const { readings } = facts;
  const identification = identificationOf(facts);
  const base = {
    ...blank(facts, mark),
    identificationProbability: identification,
    supportedBits: readings.decided.length,
  };
  const verdict = singleSourceVerdict(facts, mark, identification, base);
  if (readings.erased.length === 0) return verdict;
  const unmarked = `; ${readings.erased.length} position(s) read no mark where the leak should: read as unmarked`;
  return { ...verdict, reason: `${verdict.reason}${unmarked}` };
}

function singleSourceVerdict(
  facts: Facts,
  mark: number,
  identification: number,
  base: Omit<MatchResult, 'reason'>,
): MatchResult {
  const { candidates, scan, readings } = facts;
  if (scan.fitting.length === 1) {
    const c = scan.fitting[0] as number;
    const binaryId = binaryIdAt(candidates.packed, c);
    const contradictions = contradictionsOf(facts, binaryId);
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
      `one candidate fits the ${k} decided bits, but an innocent would fit them with chance up to ` +
      `${identification.toExponential(1)}, and a copy spliced by others can leave an innocent the only one who ` +
      'fits: nobody is named'
    );
  return 'one candidate fits, but a segment is decided against them';
}
