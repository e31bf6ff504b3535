import { CODE_LEVELS, NESTED_BASIS, WORD_BITS } from '../../identity/nested-code.js';
import { BYTES, type PackedCandidates } from './packed-ids.js';

/**
 * Where each candidate's id lies among the nested codes viewer ids are drawn from, and what that
 * lets a verdict claim (docs/forensics.md, "What a verdict may claim").
 *
 * Ids are code words plus a secret mask, each a keyed sample of one level's shell (the words of its
 * code and of no smaller one; src/domain/identity/viewer-ids.ts). Whoever made a copy (one viewer,
 * or colluders splicing, averaging or taking the bitwise minority) does not know the key, so the word
 * w the copy spells on its decided positions P is independent of which words the other viewers hold.
 * An innocent of a level of dimension d whose code restricted to P has rank r then fits w with chance
 * at most (words of the shell that show w on P) / (words in the shell). With nested codes those words
 * are 2^(d − r) in the lowest level whose restriction holds w and 2^(d − r) − 2^(d' − r') in each level
 * above it (the level below, d' and r', holds the rest): the worst such lowest level gives the bound.
 * Its sum over the innocent candidates bounds the chance that any of them fits (a union bound).
 * Ids allocated at random before the codes simply fall into some level: they are counted as its words.
 */

const LEVELS = CODE_LEVELS.length;
const DIMENSIONS = CODE_LEVELS.map((l) => l.dimension);

/** Words in each level's shell: 2^12 for the first, 2^d − 2^d' above it. */
const SHELL_SIZES = DIMENSIONS.map((d, i) => 2 ** d - (i === 0 ? 0 : 2 ** (DIMENSIONS[i - 1] as number)));

/**
 * inverse[i]: the message whose code word is the word with bit i alone set. The nested basis spans
 * all 40 bits, so every word has exactly one message, and its highest set bit names its level.
 */
function inverseBasis(): bigint[] {
  // rows: [word (bits 0…39) | message (bits 40…79)], reduced until the word part is the identity
  const rows = NESTED_BASIS.map((b, j) => b | (1n << BigInt(WORD_BITS + j)));
  for (let col = 0; col < WORD_BITS; col++) {
    const bit = 1n << BigInt(col);
    const pivot = rows.findIndex((row, r) => r >= col && (row & bit) !== 0n);
    if (pivot < 0) throw new Error('the nested basis does not span all 40 bits');
    [rows[col], rows[pivot]] = [rows[pivot] as bigint, rows[col] as bigint];
    for (let r = 0; r < WORD_BITS; r++)
      if (r !== col && ((rows[r] as bigint) & bit) !== 0n) rows[r] = (rows[r] as bigint) ^ (rows[col] as bigint);
  }
  return rows.map((row) => row >> BigInt(WORD_BITS));
}

/** Per byte position and value of a packed id: the message bits it contributes, split at bit 32. */
function messageTables(): { hi: Uint32Array; lo: Uint32Array } {
  const inverse = inverseBasis();
  const hi = new Uint32Array(BYTES * 256);
  const lo = new Uint32Array(BYTES * 256);
  for (let j = 0; j < BYTES; j++) {
    for (let v = 0; v < 256; v++) {
      let m = 0n;
      // packed byte j holds characters 8j … 8j + 7 of the binaryId, character 8j as its top bit
      for (let k = 0; k < 8; k++) if (v & (0x80 >>> k)) m ^= inverse[8 * j + k] as bigint;
      hi[j * 256 + v] = Number(m >> 32n);
      lo[j * 256 + v] = Number(m & 0xffffffffn);
    }
  }
  return { hi, lo };
}

let tables: { hi: Uint32Array; lo: Uint32Array } | undefined;

/** The level index of a message given as its high 8 and low 32 bits: the smallest level that holds its highest bit. */
function levelOfMessage(hi: number, lo: number): number {
  const bits = hi !== 0 ? 32 + (32 - Math.clz32(hi)) : 32 - Math.clz32(lo);
  for (let i = 0; i < LEVELS; i++) if (bits <= (DIMENSIONS[i] as number)) return i;
  return LEVELS - 1;
}

/** The 40-bit mask as a packed id's five bytes. */
function maskBytes(mask: bigint): number[] {
  return Array.from({ length: BYTES }, (_, j) => {
    let v = 0;
    for (let k = 0; k < 8; k++) if ((mask >> BigInt(8 * j + k)) & 1n) v |= 0x80 >>> k;
    return v;
  });
}

/** How many candidates lie in each level, and each candidate's level. */
export interface LevelCensus {
  counts: number[];
  levelOf: Uint8Array;
}

/** Sorts every candidate into its level: five table look-ups each, so a million take milliseconds. */
export function levelCensus(candidates: PackedCandidates, mask: bigint): LevelCensus {
  tables ??= messageTables();
  const { hi, lo } = tables;
  const m = maskBytes(mask);
  const { packed } = candidates;
  const N = candidates.viewerIds.length;
  const counts = new Array<number>(LEVELS).fill(0);
  const levelOf = new Uint8Array(N);
  for (let c = 0; c < N; c++) {
    let h = 0;
    let l = 0;
    for (let j = 0; j < BYTES; j++) {
      const at = j * 256 + (((packed[c * BYTES + j] as number) ^ (m[j] as number)) & 0xff);
      h ^= hi[at] as number;
      l ^= lo[at] as number;
    }
    const level = levelOfMessage(h, l >>> 0);
    levelOf[c] = level;
    counts[level] = (counts[level] as number) + 1;
  }
  return { counts, levelOf };
}

/** The nested basis as 32-bit halves (bits 0–31, 32–39), so that ranks take no bigints. */
const BASIS_LO = NESTED_BASIS.map((b) => Number(b & 0xffffffffn));
const BASIS_HI = NESTED_BASIS.map((b) => Number(b >> 32n));

const topBit = (hi: number, lo: number) => (hi !== 0 ? 63 - Math.clz32(hi) : 31 - Math.clz32(lo));

/**
 * Each level's rank on the positions P: how many of its dimensions the decided bits pin down. One
 * elimination over the nested basis restricted to P: the rank after a level's first `dimension`
 * rows is that level's.
 */
function ranksOn(positions: readonly number[]): number[] {
  let lo = 0;
  let hi = 0;
  for (const p of positions) {
    if (p < 32) lo |= 1 << p;
    else hi |= 1 << (p - 32);
  }
  const pivotLo = new Int32Array(WORD_BITS);
  const pivotHi = new Int32Array(WORD_BITS);
  const taken = new Uint8Array(WORD_BITS);
  const ranks: number[] = [];
  let rank = 0;
  for (let row = 0, level = 0; row < WORD_BITS && level < LEVELS; row++) {
    let l = (BASIS_LO[row] as number) & lo;
    let h = (BASIS_HI[row] as number) & hi;
    while (l !== 0 || h !== 0) {
      const top = topBit(h, l);
      if (!taken[top]) {
        taken[top] = 1;
        pivotLo[top] = l;
        pivotHi[top] = h;
        rank++;
        break;
      }
      l ^= pivotLo[top] as number;
      h ^= pivotHi[top] as number;
    }
    if (row + 1 === DIMENSIONS[level]) {
      ranks.push(rank);
      level++;
    }
  }
  return ranks;
}

/**
 * Per level: the chance that one viewer of that level, an innocent whose id is a keyed sample of
 * its shell, shows given bits on the positions P (at most 2^(d − r) words of its code show them).
 */
export function perViewerChance(positions: readonly number[]): number[] {
  const ranks = ranksOn(positions);
  return DIMENSIONS.map((d, i) => Math.min(1, 2 ** (d - (ranks[i] as number)) / (SHELL_SIZES[i] as number)));
}

/**
 * The identification figure: a bound on the chance that some innocent candidate's id shows the
 * decided bits on `positions`, whatever word a single source or a coalition of any size spelled
 * there. `counts` are the innocents per level (the census less whoever the verdict would name).
 */
export function identificationBound(counts: readonly number[], positions: readonly number[]): number {
  const ranks = ranksOn(positions);
  // words of each level's code (coset) that show a given word on P, once the word is in its restriction
  const matching = DIMENSIONS.map((d, i) => 2 ** (d - (ranks[i] as number)));
  let worst = 0;
  for (let lowest = 0; lowest < LEVELS; lowest++) {
    let expected = 0;
    for (let i = lowest; i < LEVELS; i++) {
      const inShell = i === lowest ? (matching[i] as number) : (matching[i] as number) - (matching[i - 1] as number);
      expected += ((counts[i] as number) * Math.min(inShell, SHELL_SIZES[i] as number)) / (SHELL_SIZES[i] as number);
    }
    worst = Math.max(worst, expected);
  }
  return Math.min(1, worst);
}

/** The census less the candidates a verdict would name: the others are the possible innocents. */
export function othersThan(census: LevelCensus, ...named: number[]): number[] {
  const counts = [...census.counts];
  for (const c of named) {
    const level = census.levelOf[c] as number;
    // a stand-in for no person was never counted
    counts[level] = Math.max(0, (counts[level] as number) - 1);
  }
  return counts;
}
