import { type SegmentRule, servedBit } from '../../src/watermark/segment-rule.js';
import { ID_BITS } from '../../src/watermark/segments.js';

// Leaks as the detector reads them: one z per segment, the sign the variant a copy carries there
// (A is +) under the content's segment rule, the size the strength of the mark in that segment, plus
// standard noise.

export type Family =
  | 'single'
  | 'clip'
  | 'part-unmarked'
  | 'splice-2'
  | 'splice-3'
  | 'average-2'
  | 'average-3'
  | 'minority-3';

export const FAMILIES: readonly Family[] = [
  'single',
  'clip',
  'part-unmarked',
  'splice-2',
  'splice-3',
  'average-2',
  'average-3',
  'minority-3',
];

/** How many copies a family mixes. */
export const SOURCES: Record<Family, number> = {
  single: 1,
  clip: 1,
  'part-unmarked': 1,
  'splice-2': 2,
  'splice-3': 3,
  'average-2': 2,
  'average-3': 3,
  'minority-3': 3,
};

/** Segments of a family's leaks: one copy whole from 1 to 40, a clip 3 to 15, the rest 10 to 60. */
export function lengthOf(family: Family): number {
  if (family === 'single') return lengthIn(1, 40);
  if (family === 'clip') return lengthIn(3, 15);
  return lengthIn(10, 60);
}

export interface LeakSegment {
  index: number;
  z: number;
  /** what one copy reads there (the segment's strength), as the video detector gives it */
  reach: number;
  /** seconds of the segment the leak holds */
  coverage: number;
}

export interface Leak {
  segments: LeakSegment[];
  /** the candidates whose copies went into it */
  sources: number[];
}

/** Box–Muller: a standard normal. */
export const gauss = () => Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());

/** A copy's sign on a segment: +1 where the rule serves the id variant A. */
export const signOf = (rule: SegmentRule, id: bigint, segment: number) =>
  servedBit(rule, idString(id), segment) === 0 ? 1 : -1;

/** A 40-bit word as a binaryId: character i is bit i. */
export function idString(word: bigint): string {
  let id = '';
  for (let i = 0; i < ID_BITS; i++) id += (word >> BigInt(i)) & 1n ? '1' : '0';
  return id;
}

/** Distinct candidates, drawn at random. */
export function draw(n: number, population: number): number[] {
  const picked = new Set<number>();
  while (picked.size < Math.min(n, population)) picked.add(Math.floor(Math.random() * population));
  return [...picked];
}

/** A length in [from, to], uniformly. */
export const lengthIn = (from: number, to: number) => from + Math.floor(Math.random() * (to - from + 1));

const pick = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)] as T;

/** The sign a family's mix of `words` carries on a segment (fractional for averages). */
function mixedSign(family: Family, words: readonly bigint[], rule: SegmentRule, index: number): number {
  if (family.startsWith('average')) return words.reduce((acc, w) => acc + signOf(rule, w, index), 0) / words.length;
  if (family === 'minority-3')
    return signOf(
      rule,
      words.reduce((acc, w) => acc ^ w, 0n),
      index,
    );
  return signOf(rule, pick(words), index);
}

/**
 * One leak of `family` over `length` segments from a random start under `rule`, its segments'
 * strengths drawn from `strengths`: a splice takes each segment from one source at random, an
 * average adds the sources' signs and divides by their number, the minority takes the bitwise XOR of
 * three. A clip is cut mid-segment at both ends: its first and last segments hold a random share of
 * their frames, down to a few (their z shrinks with the square root of it, their reach is reported
 * whole: the worst case for reading them as erased). A partly unmarked copy takes a random half of
 * its segments from the unmarked master (z standard normal, the reach whole).
 */
export function makeLeak(
  family: Family,
  length: number,
  ids: readonly bigint[],
  strengths: readonly number[],
  rule: SegmentRule,
  start = Math.floor(Math.random() * ID_BITS),
): Leak {
  const sources = draw(SOURCES[family], ids.length);
  const words = sources.map((c) => ids[c] as bigint);
  const segments = Array.from({ length }, (_, i): LeakSegment => {
    const index = start + i;
    const strength = pick(strengths);
    const edge = family === 'clip' && (i === 0 || i === length - 1);
    const share = edge ? Math.random() ** 2 : 1;
    if (family === 'part-unmarked' && Math.random() < 0.5) return { index, z: gauss(), reach: strength, coverage: 10 };
    const z = mixedSign(family, words, rule, index) * strength * Math.sqrt(share) + gauss();
    return { index, z, reach: strength, coverage: 10 * share };
  });
  return { segments, sources };
}
