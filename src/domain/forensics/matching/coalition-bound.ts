import { perViewerChance } from './id-levels.js';
import type { UnmetSets } from './least-coalitions.js';

/**
 * What being in every least coalition is worth as evidence against a viewer. Were viewer v
 * innocent, v would be in a coalition that explains the readings only if v's id met every
 * requirement its partners leave unmet: for a pair {v, d}, v shows the readings' bits on the
 * positions d misses. v's id is a keyed sample of its level, independent of what the copy's makers
 * did, so that has chance at most β_ℓ(positions d misses) (./id-levels.ts, perViewerChance), and a
 * union over every possible partner d bounds v's chance of being in any explaining pair:
 *
 *   own(ℓ) = Σ_d β_ℓ(unmet(d))      (for triples, the sum over pairs {d, e} of β_ℓ(unmet(d) ∩ unmet(e)))
 *
 * Summed over every candidate, Σ_ℓ n_ℓ · own(ℓ) bounds the chance that any innocent is in a least
 * coalition at all, so the chance that an innocent is implicated: the figure a suspect is listed under.
 * The sums run over every candidate (some N × 80 steps, and a rank per distinct set of positions);
 * past EXACT_UP_TO candidates (pairs) or TRIPLES_UP_TO (triples) they are not computed, and nobody
 * is implicated.
 */

export const EXACT_UP_TO = 100_000;
export const TRIPLES_UP_TO = 400;

export interface CoalitionBound {
  /** per level: the chance that one innocent viewer of that level is in an explaining coalition */
  own: number[];
  /** the chance that any innocent candidate is: Σ over levels of (candidates of the level) × own */
  figure: number;
}

/** β per level for the positions a set of unmet requirements names, cached by those positions. */
function chances(): (positions: number[]) => number[] {
  const cache = new Map<string, number[]>();
  return (positions) => {
    const key = positions.join(',');
    let found = cache.get(key);
    if (!found) {
      found = perViewerChance(positions);
      cache.set(key, found);
    }
    return found;
  };
}

function accumulate(total: number[], add: readonly number[]): void {
  add.forEach((v, i) => {
    total[i] = (total[i] as number) + v;
  });
}

/** The bound for coalitions of `size`, over `counts` candidates per level; undefined where it is not computed. */
export function coalitionBound(
  sets: UnmetSets,
  N: number,
  size: 2 | 3,
  counts: readonly number[],
): CoalitionBound | undefined {
  if (N > (size === 2 ? EXACT_UP_TO : TRIPLES_UP_TO)) return undefined;
  const chanceOn = chances();
  const own = counts.map(() => 0);
  for (let d = 0; d < N; d++) {
    if (size === 2) accumulate(own, chanceOn(sets.positionsOf(d)));
    else for (let e = d + 1; e < N; e++) accumulate(own, chanceOn(sets.positionsOf(d, e)));
  }
  const figure = own.reduce((sum, o, level) => sum + (counts[level] as number) * o, 0);
  return { own: own.map((o) => Math.min(1, o)), figure: Math.min(1, figure) };
}
