import { ID_BITS } from '../../watermark/segments.js';

/**
 * Nested binary cyclic codes of length 40: the space viewer ids are drawn from (docs/forensics.md,
 * "Viewer ids"). Polynomials over GF(2) are bigints, bit i the coefficient of x^i; a word's bit i is
 * position i of the id (character i of a binaryId), which the content's segment rule puts on one
 * segment of every 40.
 *
 * x^40 − 1 = (x + 1)^8 · Φ5^8 over GF(2), Φ5 = x^4 + x^3 + x^2 + x + 1. For a divisor p of degree w,
 * the multiples of g = (x^40 − 1)/p form a cyclic [40, w] code C, and C ⊂ C' when p divides p'. In
 * a cyclic [40, w] code any w cyclically consecutive positions are an information set, so the w
 * bits read at any w consecutive positions name one word of C (under the fixed segment rule of older
 * content, any w consecutive segments; a keyed rule scatters segments over the positions). The chain
 * below steps by (x + 1) from Φ5^3 (dimension 12) to Φ5^3·(x + 1)^8 (dimension 20), one dimension at
 * a time, then by Φ5 (24, 28, … 40): with N ids in the smallest level of dimension ≥ log2 N, that
 * many consecutive positions name one viewer (exactly ⌈log2 N⌉ for N from 2,049 to 2^20; up to 3
 * more past 2^20; 12 below 2,049).
 */

/** A viewer id's bits: one per segment position, cycling every 40 segments. */
export const WORD_BITS = ID_BITS;
const MASK = (1n << 40n) - 1n;
const X40_MINUS_1 = (1n << 40n) | 1n;
const X_PLUS_1 = 0b11n;
const PHI5 = 0b11111n;

export function polyMul(a: bigint, b: bigint): bigint {
  let product = 0n;
  for (let shifted = a, rest = b; rest > 0n; rest >>= 1n, shifted <<= 1n) if (rest & 1n) product ^= shifted;
  return product;
}

export const degree = (p: bigint): number => p.toString(2).length - 1;

/** Quotient and remainder of a / b over GF(2). */
export function polyDivMod(a: bigint, b: bigint): { quotient: bigint; remainder: bigint } {
  const db = degree(b);
  let quotient = 0n;
  let remainder = a;
  for (let d = degree(remainder); remainder !== 0n && d >= db; d = degree(remainder)) {
    quotient ^= 1n << BigInt(d - db);
    remainder ^= b << BigInt(d - db);
  }
  return { quotient, remainder };
}

const power = (p: bigint, n: number): bigint => Array.from({ length: n }, () => p).reduce(polyMul, 1n);

/** Multiplication modulo x^40 − 1: a cyclic shift by each term of b. */
function cyclicMul(a: bigint, b: bigint): bigint {
  return polyDivMod(polyMul(a, b), X40_MINUS_1).remainder & MASK;
}

export interface CodeLevel {
  /** the code's dimension: its words are named by this many consecutive segments */
  dimension: number;
  /** the divisor p of x^40 − 1 of degree `dimension` */
  check: bigint;
  /** g = (x^40 − 1) / p: the code is its multiples */
  generator: bigint;
}

function levelOf(phi5Power: number, xPlus1Power: number): CodeLevel {
  const check = polyMul(power(PHI5, phi5Power), power(X_PLUS_1, xPlus1Power));
  const { quotient, remainder } = polyDivMod(X40_MINUS_1, check);
  if (remainder !== 0n) throw new Error('not a divisor of x^40 - 1');
  return { dimension: degree(check), check, generator: quotient };
}

/** The chain, smallest first: 12, 13, …, 20, 24, 28, 32, 36, 40. */
export const CODE_LEVELS: readonly CodeLevel[] = [
  ...Array.from({ length: 9 }, (_, i) => levelOf(3, i)),
  ...[4, 5, 6, 7, 8].map((n) => levelOf(n, 8)),
];

/** Rank of a set of 40-bit rows over GF(2) (Gaussian elimination on the highest bit). */
export function rankOf(rows: readonly bigint[]): number {
  const pivots = new Map<number, bigint>();
  for (let row of rows) {
    for (let top = degree(row); row !== 0n; top = degree(row)) {
      const pivot = pivots.get(top);
      if (pivot === undefined) {
        pivots.set(top, row);
        break;
      }
      row ^= pivot;
    }
  }
  return pivots.size;
}

/**
 * b0 … b39 such that, for every level, its first `dimension` words span that level's code: the
 * id of message m (below 2^dimension) is the XOR of the b_j of m's set bits, a word of the code.
 */
function nestedBasis(): bigint[] {
  const basis: bigint[] = [];
  for (const level of CODE_LEVELS) {
    for (let shift = 0; basis.length < level.dimension; shift++) {
      if (shift >= WORD_BITS) throw new Error(`level ${level.dimension} is not spanned by its generator's shifts`);
      const candidate = cyclicMul(level.generator, 1n << BigInt(shift));
      if (rankOf([...basis, candidate]) > basis.length) basis.push(candidate);
    }
  }
  return basis;
}

export const NESTED_BASIS: readonly bigint[] = nestedBasis();

/** The code word of a message (a whole number below 2^40): bit j of the message selects b_j. */
export function codeWord(message: bigint): bigint {
  let word = 0n;
  for (let j = 0, rest = message; rest > 0n; j++, rest >>= 1n) if (rest & 1n) word ^= NESTED_BASIS[j] as bigint;
  return word;
}

/** Bits i … i + n − 1 of a word, cyclically (segment i's bit first). */
export function windowOf(word: bigint, start: number, length: number): bigint {
  let bits = 0n;
  for (let k = 0; k < length; k++) bits |= ((word >> BigInt((start + k) % WORD_BITS)) & 1n) << BigInt(k);
  return bits;
}

/** A word as a binaryId: character i is bit i (the variant of segments i, i + 40, …). */
export function wordToBinaryId(word: bigint): string {
  let id = '';
  for (let i = 0; i < WORD_BITS; i++) id += (word >> BigInt(i)) & 1n ? '1' : '0';
  return id;
}

export function binaryIdToWord(id: string): bigint {
  let word = 0n;
  for (let i = 0; i < WORD_BITS; i++) if (id[i] === '1') word |= 1n << BigInt(i);
  return word;
}

/**
 * The message whose code word shows `bits` at positions start … start + dimension − 1 of the
 * level: the window is an information set, so there is exactly one (Gaussian elimination over
 * the window's columns of the nested basis).
 */
export function messageFromWindow(level: CodeLevel, start: number, bits: bigint): bigint {
  const n = level.dimension;
  // row r: the window bit r of each basis word as coefficients (bits 0 … n−1), the target at bit n
  const rows = Array.from({ length: n }, (_, r) => {
    let row = ((bits >> BigInt(r)) & 1n) << BigInt(n);
    for (let j = 0; j < n; j++) row |= ((windowOf(NESTED_BASIS[j] as bigint, start, n) >> BigInt(r)) & 1n) << BigInt(j);
    return row;
  });
  for (let col = 0; col < n; col++) {
    const pivot = rows.findIndex((row, r) => r >= col && (row >> BigInt(col)) & 1n);
    if (pivot < 0) throw new Error(`positions ${start}… are not an information set of level ${n}`);
    [rows[col], rows[pivot]] = [rows[pivot] as bigint, rows[col] as bigint];
    for (let r = 0; r < n; r++)
      if (r !== col && ((rows[r] as bigint) >> BigInt(col)) & 1n) rows[r] = (rows[r] as bigint) ^ (rows[col] as bigint);
  }
  return rows.reduce((message, row, j) => message | (((row >> BigInt(n)) & 1n) << BigInt(j)), 0n);
}
