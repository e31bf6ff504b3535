import { ID_BITS } from '../../src/watermark/segments.js';

// Leaks as the detector reads them: one z per segment, the sign the variant a copy carries there
// (A, bit 0, is +), the size the strength of the mark in that segment, plus standard noise.

export type Family = 'single' | 'splice-2' | 'splice-3' | 'average-2' | 'average-3' | 'minority-3';

export const FAMILIES: readonly Family[] = ['single', 'splice-2', 'splice-3', 'average-2', 'average-3', 'minority-3'];

/** How many copies a family mixes. */
export const SOURCES: Record<Family, number> = {
  single: 1,
  'splice-2': 2,
  'splice-3': 3,
  'average-2': 2,
  'average-3': 3,
  'minority-3': 3,
};

export interface Leak {
  /** z as read; reach, what one copy reads there (the segment's strength), as the video detector gives it */
  segments: { index: number; z: number; reach: number }[];
  /** the candidates whose copies went into it */
  sources: number[];
}

/** Box–Muller: a standard normal. */
export const gauss = () => Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());

const sign = (id: bigint, segment: number) => (((id >> BigInt(segment % ID_BITS)) & 1n) === 0n ? 1 : -1);

/** Distinct candidates, drawn at random. */
function draw(n: number, population: number): number[] {
  const picked = new Set<number>();
  while (picked.size < Math.min(n, population)) picked.add(Math.floor(Math.random() * population));
  return [...picked];
}

/**
 * One leak of `family` over `length` segments from a random start, its segments' strengths drawn
 * from `strengths` (a real reading's |z|, or 6–10): a splice takes each segment from one source at
 * random, an average adds the sources' signs and divides by their number, the minority takes the
 * bitwise XOR of three (the odd one out where they differ).
 */
export function makeLeak(
  family: Family,
  length: number,
  ids: readonly bigint[],
  strengths: readonly number[],
  start = Math.floor(Math.random() * ID_BITS),
): Leak {
  const sources = draw(SOURCES[family], ids.length);
  const words = sources.map((c) => ids[c] as bigint);
  const segments = Array.from({ length }, (_, i) => {
    const index = start + i;
    const strength = strengths[Math.floor(Math.random() * strengths.length)] as number;
    let s: number;
    if (family.startsWith('splice') || family === 'single')
      s = sign(words[Math.floor(Math.random() * words.length)] as bigint, index);
    else if (family.startsWith('average')) s = words.reduce((acc, w) => acc + sign(w, index), 0) / words.length;
    else
      s = sign(
        words.reduce((acc, w) => acc ^ w, 0n),
        index,
      );
    return { index, z: s * strength + gauss(), reach: strength };
  });
  return { segments, sources };
}

/** A length in [from, to], uniformly. */
export const lengthIn = (from: number, to: number) => from + Math.floor(Math.random() * (to - from + 1));
