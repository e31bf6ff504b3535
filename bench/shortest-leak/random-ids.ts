import { randomBytes } from 'node:crypto';

// The allocation drm used before the nested codes, kept as this benchmark's baseline: ids drawn at random
// and redrawn while any existing id lies within Hamming distance 8 (a scan of every id per draw,
// refused ever more often past ~50,000 viewers).

export const MIN_DISTANCE = 9;
const TRIES = 1000;

/** The 40 bits as a number (exact: below 2^53). */
export function binaryIdValue(id: string): number {
  return Number.parseInt(id, 2);
}

function popcount(v: number): number {
  let n = 0;
  for (let x = v >>> 0; x; x &= x - 1) n++;
  return n;
}

/** Hamming distance of two ids given as numbers: XOR in two 20-bit halves (bitwise ops are 32-bit). */
export function hamming(a: number, b: number): number {
  const half = 2 ** 20;
  return popcount(Math.floor(a / half) ^ Math.floor(b / half)) + popcount((a % half) ^ (b % half));
}

export function randomBinaryId(): string {
  const bytes = randomBytes(5);
  return Array.from(bytes, (b) => b.toString(2).padStart(8, '0')).join('');
}

/** A new id at distance ≥ 9 from every one of `existing`. */
export function allocateBinaryId(existing: readonly string[], draw: () => string = randomBinaryId): string {
  const taken = existing.map(binaryIdValue);
  for (let i = 0; i < TRIES; i++) {
    const id = draw();
    const v = binaryIdValue(id);
    if (taken.every((t) => hamming(t, v) >= MIN_DISTANCE)) return id;
  }
  throw new Error(`no free viewer id found in ${TRIES} draws: the 40-bit id space is too crowded`);
}
