import { bitAt, type PackedCandidates } from './packed-ids.js';
import type { Readings } from './readings.js';

/**
 * Every coalition of the least size whose copies explain the readings of a mixed copy, counted
 * exactly where the work allows. A position read A needs a member served A there, one read B a
 * member served B, one read both ways a member of each (the requirements below). A coalition
 * explains the readings when each requirement is met by one of its members: its members' unmet
 * requirements have nothing in common.
 *
 * Pairs are counted by splitting the candidates on one requirement after another: two groups can
 * hold explaining pairs only if no requirement so far is unmet in both, so most of the pairs are
 * never looked at. That takes some N^1.6 steps, so a budget stops it on populations where it would
 * not end in time; the search then says it was not exhaustive, and its count is a lower bound.
 * Triples are counted only when no pair explains, among few enough candidates to try them all.
 */

export interface Requirement {
  position: number;
  /** the variant the position needs from some member, as a served id bit: 0 or 1 */
  bit: 0 | 1;
}

export interface LeastCoalitions {
  /** 2 or 3; null when none of at most 3 explains the readings (or none was found) */
  size: 2 | 3 | null;
  /** the coalitions of that size that explain the readings: exact when `exhaustive`, else a lower bound */
  count: number;
  exhaustive: boolean;
  /** per candidate: how many of those coalitions it is in (exhaustive searches only) */
  membership: Map<number, number>;
}

/** Steps of the pair search before it gives up on exactness. */
export const PAIR_STEPS = 4_000_000;
/** Triples are tried exhaustively among at most this many candidates. */
export const TRIPLE_CANDIDATES = 400;
/** Below this many candidates every pair is simply tried. */
const ALL_PAIRS_BELOW = 1500;

/** What every coalition must cover: one requirement per decided position, two per position read both ways. */
export function requirementsOf(readings: Readings): Requirement[] {
  const both = readings.both.flatMap((position) => [
    { position, bit: 0 as const },
    { position, bit: 1 as const },
  ]);
  const decided = readings.decided.map((position) => ({
    position,
    bit: (readings.positions[position] === 'B' ? 1 : 0) as 0 | 1,
  }));
  // positions read both ways split the candidates most evenly: they go first
  return [...both, ...decided];
}

/** Each candidate's unmet requirements as bits of three 32-bit words (at most 80 requirements). */
export class UnmetSets {
  readonly words: Uint32Array;

  constructor(
    candidates: PackedCandidates,
    readonly requirements: readonly Requirement[],
  ) {
    const N = candidates.viewerIds.length;
    this.words = new Uint32Array(N * 3);
    requirements.forEach((r, u) => {
      const word = u >> 5;
      const bit = 1 << (u & 31);
      const words = this.words;
      for (let c = 0; c < N; c++)
        if (bitAt(candidates.packed, c, r.position) !== r.bit)
          words[c * 3 + word] = (words[c * 3 + word] as number) | bit;
    });
  }

  /** Whether candidates a and b together meet every requirement (and c too, when given). */
  explain(a: number, b: number, c?: number): boolean {
    const w = this.words;
    for (let k = 0; k < 3; k++) {
      let both = (w[a * 3 + k] as number) & (w[b * 3 + k] as number);
      if (c !== undefined) both &= w[c * 3 + k] as number;
      if (both !== 0) return false;
    }
    return true;
  }

  /** The positions of the requirements candidate c leaves unmet. */
  positionsOf(c: number, also?: number): number[] {
    const out: number[] = [];
    this.requirements.forEach((r, u) => {
      const word = u >> 5;
      const bit = 1 << (u & 31);
      const unmet =
        (this.words[c * 3 + word] as number) & (also === undefined ? -1 : (this.words[also * 3 + word] as number));
      if (unmet & bit) out.push(r.position);
    });
    return out;
  }
}

class Tally {
  count = 0;
  readonly membership = new Map<number, number>();

  /** Every pair of x × y (or of x with itself when y is absent) explains. */
  addAll(x: Int32Array, y?: Int32Array): void {
    const add = (c: number, n: number) => this.membership.set(c, (this.membership.get(c) ?? 0) + n);
    if (y === undefined) {
      this.count += (x.length * (x.length - 1)) / 2;
      for (const c of x) add(c, x.length - 1);
      return;
    }
    this.count += x.length * y.length;
    for (const c of x) add(c, y.length);
    for (const c of y) add(c, x.length);
  }

  add(...members: number[]): void {
    this.count++;
    for (const c of members) this.membership.set(c, (this.membership.get(c) ?? 0) + 1);
  }
}

class OutOfSteps extends Error {}

/** Splits the pair search on requirement `level` until the groups are small, counting what explains. */
function pairSearch(sets: UnmetSets, candidates: PackedCandidates, tally: Tally, budget: { steps: number }) {
  const R = sets.requirements;
  const split = (group: Int32Array, level: number) => {
    const r = R[level] as Requirement;
    const meet: number[] = [];
    const miss: number[] = [];
    for (const c of group) (bitAt(candidates.packed, c, r.position) === r.bit ? meet : miss).push(c);
    return [Int32Array.from(meet), Int32Array.from(miss)] as const;
  };
  const visit = (x: Int32Array, y: Int32Array | undefined, level: number): void => {
    if (x.length === 0 || y?.length === 0 || (y === undefined && x.length < 2)) return;
    budget.steps -= x.length + (y?.length ?? 0);
    if (budget.steps < 0) throw new OutOfSteps();
    if (level === R.length) {
      tally.addAll(x, y);
      return;
    }
    if (x.length * (y?.length ?? x.length) <= 64) {
      bruteForce(sets, tally, x, y);
      return;
    }
    const [xMeet, xMiss] = split(x, level);
    if (y === undefined) {
      visit(xMeet, undefined, level + 1);
      visit(xMeet, xMiss, level + 1);
      return;
    }
    const [yMeet, yMiss] = split(y, level);
    visit(xMeet, yMeet, level + 1);
    visit(xMeet, yMiss, level + 1);
    visit(xMiss, yMeet, level + 1);
  };
  return visit;
}

function bruteForce(sets: UnmetSets, tally: Tally, x: Int32Array, y?: Int32Array): void {
  for (let i = 0; i < x.length; i++) {
    const others = y ?? x;
    for (let j = y ? 0 : i + 1; j < others.length; j++)
      if (sets.explain(x[i] as number, others[j] as number)) tally.add(x[i] as number, others[j] as number);
  }
}

/** The pairs that explain the readings, among `pool` (every candidate that may stand for a person or a copy). */
function leastPairs(sets: UnmetSets, candidates: PackedCandidates, pool: Int32Array): Tally | undefined {
  const tally = new Tally();
  if (pool.length < ALL_PAIRS_BELOW) {
    bruteForce(sets, tally, pool);
    return tally;
  }
  try {
    pairSearch(sets, candidates, tally, { steps: PAIR_STEPS })(pool, undefined, 0);
    return tally;
  } catch (err) {
    if (err instanceof OutOfSteps) return undefined;
    throw err;
  }
}

function leastTriples(sets: UnmetSets, pool: Int32Array): Tally {
  const tally = new Tally();
  for (let i = 0; i < pool.length; i++)
    for (let j = i + 1; j < pool.length; j++)
      for (let k = j + 1; k < pool.length; k++) {
        const [a, b, c] = [pool[i] as number, pool[j] as number, pool[k] as number];
        if (sets.explain(a, b, c)) tally.add(a, b, c);
      }
  return tally;
}

/** The least coalitions, exactly where the budget allows; `undefined` where the pair search ran out of steps. */
export function leastCoalitions(sets: UnmetSets, candidates: PackedCandidates): LeastCoalitions | undefined {
  const pool = Int32Array.from(candidates.viewerIds.keys());
  const pairs = leastPairs(sets, candidates, pool);
  if (pairs === undefined) return undefined;
  if (pairs.count > 0) return { size: 2, count: pairs.count, exhaustive: true, membership: pairs.membership };
  if (pool.length > TRIPLE_CANDIDATES) return undefined;
  const triples = leastTriples(sets, pool);
  return triples.count > 0
    ? { size: 3, count: triples.count, exhaustive: true, membership: triples.membership }
    : { size: null, count: 0, exhaustive: true, membership: triples.membership };
}

/** The candidates in every one of the least coalitions (an exhaustive search's). */
export function commonToAll(found: LeastCoalitions): number[] {
  if (!found.exhaustive || found.count === 0) return [];
  return [...found.membership].filter(([, n]) => n === found.count).map(([c]) => c);
}
