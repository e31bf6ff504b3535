import { type CandidateFit, fitOf } from './candidate-set.js';
import { coalitionBound } from './coalition-bound.js';
import { averagedPairs, searchCoalitions } from './coalitions.js';
import { identificationBound, othersThan, perViewerChance } from './id-levels.js';
import { commonToAll, type LeastCoalitions, leastCoalitions, requirementsOf, UnmetSets } from './least-coalitions.js';
import { blank, type Facts, type MatchResult, type MixedCopy, STRONG_FP, WEAK_FP } from './verdict.js';

/**
 * A copy no single viewer explains, and who, if anyone, it implicates.
 *
 * Suspects only where every explanation agrees: the analysis finds every coalition of the least
 * size (2 or 3) whose copies explain the readings (./least-coalitions.ts) and implicates only the
 * viewers who are in every one of them, and only when an innocent would be in such a coalition with
 * chance at most WEAK_FP (./coalition-bound.ts). Each suspect carries its own bound. Where no viewer
 * is common to all, or the search could not be exhaustive, nobody is a suspect, and the result says
 * how many coalitions fit.
 *
 * An average of exactly two copies is found exactly instead: both colluders fit every decided bit
 * and differ on every erased position (averagedPairs). The pair figure is the chance that innocents
 * complete such a pair: an innocent who pairs with a colluder must show the other colluder's bits on
 * every position read or erased (I(P_all) each way), and two innocents must fit the decided bits
 * (I(P_dec)) with one showing the other's complement on the erased ones (I(P_all)). So it is
 * 2·I(P_all) + I(P_dec)·I(P_all), over the candidates less the two. A pair common to every averaged
 * pair is named when that figure is at most `strongBelow`.
 */

/**
 * Past this many candidates the exhaustive search is not tried: innocent pairs alone explain a 40-bit reading by the
 * thousand there ((3/4)^40 of 5·10^11 pairs at a million), so nobody could be common to all of them anyway.
 */
const SEARCHED_UP_TO = 100_000;

function pairFigure(facts: Facts, pair: readonly number[]): number {
  const { readings } = facts;
  // a stand-in was never counted among the innocents: only persons are taken out
  const counts = othersThan(facts.census, ...pair.filter(isPerson(facts)));
  const all = [...readings.decided, ...readings.erased, ...readings.both];
  const whole = identificationBound(counts, all);
  return Math.min(1, 2 * whole + identificationBound(counts, readings.decided) * whole);
}

const isPerson = (facts: Facts) => (c: number) => !facts.standIns.has(c);

/**
 * Erased positions as the evidence of an average of two: an averaged pair explains them, and
 * innocents would complete such a pair by chance at most WEAK_FP. Otherwise undefined, and the
 * erased positions are read as unmarked stretches of one copy (the caller's single-source verdict).
 */
export function averagedPair(facts: Facts, mark: number): MatchResult | undefined {
  const { candidates, readings, scan } = facts;
  if (readings.erased.length === 0 || readings.both.length > 0) return undefined;
  const found = averagedPairs(candidates, scan.fitting, readings.erased);
  if (found.count === 0 || !found.first) return undefined;
  const figure = pairFigure(facts, found.first);
  if (figure > WEAK_FP) return undefined;
  const common = found.common.filter(isPerson(facts));
  const named = common.length === 2 && figure <= facts.strongBelow && mark <= STRONG_FP;
  // were a suspect innocent, it completes a pair with one of the viewers who fit the decided bits only by showing
  // that viewer's bits on every position read and their complement where erased: once per possible partner
  const own = perViewerChance([...readings.decided, ...readings.erased]);
  const partners = scan.fitting.length;
  const suspects = common.map((c) => ({
    ...fitOf(candidates, scan, readings, c, null),
    bound: Math.min(1, partners * (own[facts.census.levelOf[c] as number] as number)),
  }));
  return {
    ...blank(facts, mark),
    classification: 'mixed_copy',
    // the same question as every verdict's figure (could an innocent fit the decided bits?); the pair's own is
    // pairProbability
    identificationProbability: identificationBound(
      othersThan(facts.census, ...found.first.filter(isPerson(facts))),
      readings.decided,
    ),
    supportedBits: readings.decided.length,
    mixed: {
      bothPositions: [],
      erasedPositions: readings.erased,
      leastSources: 2,
      suspects,
      coalitionsFound: found.count,
      exhaustive: true,
      inEveryCoalition: common.length,
      implicationProbability: figure,
      named,
      pairProbability: figure,
    },
    reason: named
      ? `an average of two copies: ${readings.erased.length} position(s) lost their mark, and one pair alone ` +
        'explains the readings'
      : `an average of two copies: ${found.count} pair(s) explain the readings` +
        (common.length > 0 ? '' : ', with no viewer in all of them') +
        '; nobody is named',
  };
}

/** The least coalitions: exhaustive where the work allows, else what the bounded search found (a lower bound). */
function coalitionsOf(facts: Facts, sets: () => UnmetSets): LeastCoalitions {
  const exact =
    facts.candidates.viewerIds.length <= SEARCHED_UP_TO ? leastCoalitions(sets(), facts.candidates) : undefined;
  if (exact) return exact;
  const bounded = searchCoalitions(facts.candidates, facts.readings, facts.scan.misses);
  return { size: bounded.leastSources, count: bounded.found, exhaustive: false, membership: new Map() };
}

/** The viewers in every least coalition, each with its own bound, if an innocent would be among them rarely enough. */
function implicated(facts: Facts, sets: () => UnmetSets, found: LeastCoalitions) {
  const common = commonToAll(found).filter(isPerson(facts));
  const size = found.size;
  const bound =
    common.length > 0 && size !== null
      ? coalitionBound(sets(), facts.candidates.viewerIds.length, size, facts.census.counts)
      : undefined;
  const trusted = bound !== undefined && bound.figure <= WEAK_FP;
  const suspects: (CandidateFit & { bound: number })[] = trusted
    ? common.map((c) => ({
        ...fitOf(facts.candidates, facts.scan, facts.readings, c, null),
        bound: bound.own[facts.census.levelOf[c] as number] as number,
      }))
    : [];
  return { common, suspects, figure: bound?.figure ?? null };
}

function mixedReason(facts: Facts, found: LeastCoalitions, who: ReturnType<typeof implicated>): string {
  const { readings } = facts;
  const why =
    readings.both.length > 0
      ? `${readings.both.length} bit position(s) read both ways`
      : readings.erased.length > 0
        ? `${readings.erased.length} bit position(s) lost their mark`
        : 'no single viewer fits the decided bits';
  if (found.size === null)
    return (
      `${why}: the copy was mixed, but ${found.exhaustive ? 'no' : 'a bounded search found no'} coalition of ` +
      'up to 3 viewers explains it; nobody is a suspect'
    );
  const sources = `at least ${found.size} viewers`;
  const count = `${found.exhaustive ? '' : 'at least '}${found.count} coalition(s) of ${found.size} fit`;
  if (who.suspects.length > 0)
    return `${why}: the copy was mixed from ${sources}; ${count}, and ${who.suspects.length} viewer(s) are in all`;
  const none =
    who.common.length === 0
      ? 'no viewer is in all of them'
      : who.figure === null
        ? `${who.common.length} viewer(s) are in all of them, too many candidates to bound an innocent's chance`
        : `an innocent would be in all of them with chance up to ${who.figure.toExponential(1)}`;
  const nobody = found.exhaustive ? none : 'not all counted';
  return `${why}: the copy was mixed from ${sources}; ${count}, ${nobody}; nobody is a suspect`;
}

export function mixedOrNone(facts: Facts, mark: number): MatchResult {
  const { candidates, readings } = facts;
  let made: UnmetSets | undefined;
  const sets = () => {
    made ??= new UnmetSets(candidates, requirementsOf(readings));
    return made;
  };
  const found = coalitionsOf(facts, sets);
  const mixed = readings.both.length > 0 || readings.erased.length > 0;
  if (!mixed && found.size === null) {
    return { ...blank(facts, mark), reason: 'no viewer fits the decided bits, nor does any coalition of up to 3' };
  }
  const who = implicated(facts, sets, found);
  const analysis: MixedCopy = {
    bothPositions: readings.both,
    erasedPositions: readings.erased,
    leastSources: found.size,
    suspects: who.suspects,
    coalitionsFound: found.count,
    exhaustive: found.exhaustive,
    inEveryCoalition: who.common.length,
    implicationProbability: who.figure,
    named: false,
    pairProbability: null,
  };
  return {
    ...blank(facts, mark),
    classification: 'mixed_copy',
    identificationProbability: identificationBound(facts.census.counts, readings.decided),
    mixed: analysis,
    reason: mixedReason(facts, found, who),
  };
}
