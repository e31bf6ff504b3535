import { fitOf, LISTED } from './candidate-set.js';
import { averagedPairs, searchCoalitions } from './coalitions.js';
import { identificationBound, othersThan } from './id-levels.js';
import { blank, type Facts, type MatchResult, STRONG_FP } from './verdict.js';

/**
 * A copy no single viewer explains. The readings show a mix (positions read both ways across
 * repeats, positions whose mark was erased) or nobody fits the decided bits. The analysis finds the
 * fewest viewers whose copies explain every reading (./coalitions.ts) and names nobody, with one
 * exception: an average of exactly two copies. Both colluders then fit every decided bit and
 * differ on every erased position, so one pair is found exactly (averagedPairs). Its members are
 * named when the chance that an innocent completes such a pair is at most `strongBelow`:
 *   - an innocent who pairs with a colluder must show the other colluder's bits on every position
 *     read or erased: at most I(P_all) each way;
 *   - two innocents must fit the decided bits (I(P_dec)) and one must show the other's complement
 *     on the erased positions (I(P_all)).
 * So the pair figure is 2·I(P_all) + I(P_dec)·I(P_all), over the candidates less the two.
 */

function pairFigure(facts: Facts, pair: readonly [number, number]): number {
  const { readings } = facts;
  const counts = othersThan(facts.census, ...pair);
  const all = [...readings.decided, ...readings.erased, ...readings.both];
  const whole = identificationBound(counts, all);
  return Math.min(1, 2 * whole + identificationBound(counts, readings.decided) * whole);
}

/** The one averaged pair the readings single out, named if innocents complete it with chance ≤ strongBelow. */
function averagedPair(facts: Facts, mark: number): MatchResult | undefined {
  const { candidates, readings, scan } = facts;
  if (readings.erased.length === 0 || readings.both.length > 0) return undefined;
  const { count, first: pair } = averagedPairs(candidates, scan.fitting, readings.erased);
  if (count !== 1 || !pair || facts.standIns.has(pair[0]) || facts.standIns.has(pair[1])) return undefined;
  const figure = pairFigure(facts, pair);
  const named = figure <= facts.strongBelow && mark <= STRONG_FP;
  const suspects = pair.map((c) => fitOf(candidates, scan, readings, c, null));
  return {
    ...blank(facts, mark),
    classification: 'mixed_copy',
    // the same question as every verdict's figure (could an innocent fit the decided bits?); the pair's own is
    // pairProbability
    identificationProbability: identificationBound(othersThan(facts.census, ...pair), readings.decided),
    supportedBits: readings.decided.length,
    mixed: {
      bothPositions: [],
      erasedPositions: readings.erased,
      leastSources: 2,
      suspects,
      coalitionsFound: 1,
      named,
      pairProbability: figure,
    },
    reason: named
      ? `an average of two copies: ${readings.erased.length} position(s) lost their ` +
        `mark, and one pair alone explains the readings`
      : `an average of two copies: one pair explains the readings, but innocents would ` +
        `complete such a pair with chance up to ${figure.toExponential(1)}; nobody is named`,
  };
}

export function mixedOrNone(facts: Facts, mark: number): MatchResult {
  const averaged = averagedPair(facts, mark);
  if (averaged) return averaged;
  const { candidates, readings, scan } = facts;
  const search = searchCoalitions(candidates, readings, scan.misses);
  const mixed = readings.both.length > 0 || readings.erased.length > 0;
  if (!mixed && search.leastSources === null) {
    return { ...blank(facts, mark), reason: 'no viewer fits the decided bits, nor does any coalition of up to 3' };
  }
  const suspects = search.members.slice(0, LISTED).map((c) => fitOf(candidates, scan, readings, c, null));
  const why =
    readings.both.length > 0
      ? `${readings.both.length} bit position(s) read both ways`
      : readings.erased.length > 0
        ? `${readings.erased.length} bit position(s) lost their mark`
        : 'no single viewer fits the decided bits';
  const sources = search.leastSources === null ? 'more than 3 viewers' : `at least ${search.leastSources} viewers`;
  return {
    ...blank(facts, mark),
    classification: 'mixed_copy',
    identificationProbability: identificationBound(facts.census.counts, readings.decided),
    mixed: {
      bothPositions: readings.both,
      erasedPositions: readings.erased,
      leastSources: search.leastSources,
      suspects,
      coalitionsFound: search.found,
      named: false,
      pairProbability: null,
    },
    reason: `${why}: the copy was mixed from ${sources}; nobody is named`,
  };
}
