import { createHmac } from 'node:crypto';
import { CODE_LEVELS, type CodeLevel, codeWord, WORD_BITS, wordToBinaryId } from './nested-code.js';

/**
 * The N-th viewer's permanent id, in constant time: a pure function of a counter and a key
 * derived from the server secret (DESIGN.md, "Viewers"; ./nested-code.ts for the codes).
 *
 * Counter k falls in the shell of one level: [0, 2^12) for the first, [2^d', 2^d) for a level of
 * dimension d after one of d'. A keyed permutation of that shell turns k into the message, so
 * every id of a level is a word of its code (the window property) and the ids of all levels are
 * distinct (the shells are disjoint and the nested basis is independent); the order of allocation
 * does not show. A keyed 40-bit mask is then added: a coset of the code keeps the window property
 * (the mask's bits are known to the detector's side, never to viewers) and no viewer is handed a
 * public code word such as 00…0, which an unmarked copy would read as.
 */

export interface ViewerIdKey {
  /** keys the permutation of each level's shell */
  permutation: Buffer;
  /** XORed onto every code word */
  mask: bigint;
}

export function viewerIdKey(secretKey: Buffer): ViewerIdKey {
  const derive = (label: string) => createHmac('sha256', secretKey).update(label).digest();
  const maskBytes = derive('drm viewer ids: mask').subarray(0, 5);
  return { permutation: derive('drm viewer ids: permutation'), mask: BigInt(`0x${maskBytes.toString('hex')}`) };
}

export interface Shell {
  level: CodeLevel;
  /** the first counter of the shell */
  start: bigint;
  /** how many counters it holds */
  size: bigint;
}

/** The shell of the level counter k is allocated from. */
export function shellOf(counter: bigint): Shell {
  let start = 0n;
  for (const level of CODE_LEVELS) {
    const end = 1n << BigInt(level.dimension);
    if (counter < end) return { level, start, size: end - start };
    start = end;
  }
  throw new Error(`viewer id counter past 2^${WORD_BITS}: ${counter}`);
}

const ROUNDS = 6;

/**
 * A keyed permutation of [0, size): a balanced Feistel network on the smallest even number of
 * bits that holds size, walked until it lands inside (cycle walking keeps it a bijection of
 * [0, size); a shell is at least half of that space, so a walk takes four steps at most on average).
 */
export function permuteWithin(key: Buffer, domainLabel: string, size: bigint, value: bigint): bigint {
  const half = BigInt(Math.ceil((size - 1n).toString(2).length / 2));
  const halfMask = (1n << half) - 1n;
  const round = (i: number, right: bigint) => {
    const digest = createHmac('sha256', key).update(`${domainLabel}:${i}:${right}`).digest();
    return BigInt(`0x${digest.subarray(0, 8).toString('hex')}`) & halfMask;
  };
  let x = value;
  do {
    let left = x >> half;
    let right = x & halfMask;
    for (let i = 0; i < ROUNDS; i++) [left, right] = [right, left ^ round(i, right)];
    x = (left << half) | right;
  } while (x >= size);
  return x;
}

/** The message (below 2^dimension of its level) that counter k is given. */
export function messageFor(key: ViewerIdKey, counter: bigint): { message: bigint; level: CodeLevel } {
  const shell = shellOf(counter);
  const offset = permuteWithin(key.permutation, `level ${shell.level.dimension}`, shell.size, counter - shell.start);
  return { message: shell.start + offset, level: shell.level };
}

/** The id of counter k, as a 40-bit word (mask included). */
export function viewerIdWord(key: ViewerIdKey, counter: bigint): bigint {
  return codeWord(messageFor(key, counter).message) ^ key.mask;
}

/** The binaryId of counter k. */
export function viewerIdFor(key: ViewerIdKey, counter: bigint): string {
  return wordToBinaryId(viewerIdWord(key, counter));
}
