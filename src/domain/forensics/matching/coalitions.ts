import { bitAt, type PackedCandidates } from './packed-ids.js';
import type { Readings } from './readings.js';

/**
 * The least number of viewers whose copies, spliced or averaged, explain every reading of a copy
 * that no single viewer explains. A position read A needs a member served A there, one read B a
 * member served B, and one read both ways (a splice across repeated positions) a member of each.
 *
 * The search is bounded: pairs among the PAIR_POOL candidates that miss the fewest readings, and
 * triples among the TRIPLE_POOL of them (ranked by misses, then viewer id, so that the order in
 * which candidates come never changes the outcome). What it finds are suspects, never a verdict:
 * many coalitions of innocents explain a short window as well (see docs/forensics.md).
 */

export const PAIR_POOL = 1024;
export const TRIPLE_POOL = 128;

export interface CoalitionSearch {
  /** 2 or 3 when a coalition of that size explains every reading; null when none of at most 3 was found */
  leastSources: 2 | 3 | null;
  /** the members of the first coalition of that size, by rank */
  members: number[];
  /** how many coalitions of that size were found in the pools */
  found: number;
}

/** Bit u of the result: requirement u this candidate leaves unmet (positions needing A first, then those needing B). */
function unmet(packed: Uint8Array, c: number, needA: readonly number[], needB: readonly number[]): bigint {
  const bit = (b: number) => bitAt(packed, c, b);
  let miss = 0n;
  needA.forEach((b, u) => {
    if (bit(b) === 1) miss |= 1n << BigInt(u);
  });
  needB.forEach((b, u) => {
    if (bit(b) === 0) miss |= 1n << BigInt(needA.length + u);
  });
  return miss;
}

/**
 * The `size` candidates that miss the fewest decided positions (every candidate leaves exactly one
 * requirement of each position read both ways unmet, so `misses` ranks them), ties by viewer id.
 */
function pool(candidates: PackedCandidates, misses: Uint8Array, size: number): number[] {
  const histogram = new Array<number>(256).fill(0);
  for (const m of misses) histogram[m] = (histogram[m] as number) + 1;
  let cutoff = 0;
  for (let taken = 0; cutoff < 256 && taken + (histogram[cutoff] as number) < size; cutoff++)
    taken += histogram[cutoff] as number;
  const below: number[] = [];
  const at: number[] = [];
  misses.forEach((m, c) => {
    if (m < cutoff) below.push(c);
    else if (m === cutoff) at.push(c);
  });
  const ids = candidates.viewerIds;
  const byMisses = (a: number, b: number) =>
    (misses[a] as number) - (misses[b] as number) || ((ids[a] as string) < (ids[b] as string) ? -1 : 1);
  at.sort(byMisses);
  return [...below.sort(byMisses), ...at.slice(0, size - below.length)];
}

/** `misses`: each candidate's decided positions missed (Scan.misses). */
export function searchCoalitions(
  candidates: PackedCandidates,
  readings: Readings,
  misses: Uint8Array,
): CoalitionSearch {
  const needA = readings.positions.flatMap((r, b) => (r === 'A' || r === 'both' ? [b] : []));
  const needB = readings.positions.flatMap((r, b) => (r === 'B' || r === 'both' ? [b] : []));
  const best = pool(candidates, misses, PAIR_POOL).map((index) => ({
    index,
    miss: unmet(candidates.packed, index, needA, needB),
  }));
  const pairs: number[][] = [];
  for (let i = 0; i < best.length; i++) {
    for (let j = i + 1; j < best.length; j++) {
      if (((best[i]?.miss as bigint) & (best[j]?.miss as bigint)) === 0n)
        pairs.push([best[i]?.index as number, best[j]?.index as number]);
    }
  }
  if (pairs.length > 0) return { leastSources: 2, members: pairs[0] as number[], found: pairs.length };
  const few = best.slice(0, TRIPLE_POOL);
  let found = 0;
  let members: number[] = [];
  for (let i = 0; i < few.length; i++) {
    for (let j = i + 1; j < few.length; j++) {
      const left = (few[i]?.miss as bigint) & (few[j]?.miss as bigint);
      for (let k = j + 1; k < few.length; k++) {
        if ((left & (few[k]?.miss as bigint)) !== 0n) continue;
        if (found++ === 0) members = [few[i]?.index as number, few[j]?.index as number, few[k]?.index as number];
      }
    }
  }
  return found > 0 ? { leastSources: 3, members, found } : { leastSources: null, members: [], found: 0 };
}

/**
 * Pairs of fitting candidates whose copies averaged give the readings: both fit every decided bit
 * (an average keeps the mark where two copies agree) and they differ on every erased position
 * (where they differ, opposite marks cancel). Found exactly, whatever the number of candidates
 * that fit: each fitting candidate's bits on the erased positions are looked up complemented. The
 * pairs are counted from the groups, not listed (half a million candidates fitting a short leak
 * make billions of them): `first` is one of them when there is any.
 */
export function averagedPairs(
  candidates: PackedCandidates,
  fitting: Int32Array,
  erased: readonly number[],
): { count: number; first: [number, number] | null; common: number[] } {
  if (erased.length === 0) return { count: 0, first: null, common: [] };
  const bit = (c: number, b: number) => bitAt(candidates.packed, c, b);
  const keyOf = (c: number, flip: 0 | 1) => erased.map((b) => String(bit(c, b) ^ flip)).join('');
  const groups = new Map<string, number[]>();
  for (const c of fitting) {
    const key = keyOf(c, 0);
    const same = groups.get(key);
    if (same) same.push(c);
    else groups.set(key, [c]);
  }
  let count = 0;
  let first: [number, number] | null = null;
  const products: [number[], number[]][] = [];
  for (const [key, members] of groups) {
    const partners = groups.get(keyOf(members[0] as number, 1));
    // each pair of groups once: the one whose key starts with 0 counts it
    if (!partners || key[0] !== '0') continue;
    count += members.length * partners.length;
    first ??= [members[0] as number, partners[0] as number];
    products.push([members, partners]);
  }
  return { count, first, common: commonMembers(products) };
}

/** The candidates in every pair of one group times its partners: a group of one is in all of them. */
function commonMembers(products: readonly [number[], number[]][]): number[] {
  if (products.length !== 1) return [];
  const [members, partners] = products[0] as [number[], number[]];
  return [...(members.length === 1 ? members : []), ...(partners.length === 1 ? partners : [])];
}
