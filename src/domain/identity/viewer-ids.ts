import { createHmac } from 'node:crypto';
import { CODE_LEVELS, type CodeLevel, codeWord, WORD_BITS, wordToBinaryId } from './nested-code.js';

export { type ViewerIdKey, viewerIdKey } from '../../crypto/viewer-id-key.js';
import type { ViewerIdKey } from '../../crypto/viewer-id-key.js';

/**
 * The N-th viewer's permanent id, in constant time: a pure function of a counter and a key
 * derived from the server secret (docs/forensics.md, "Viewer ids"; ./nested-code.ts for the codes).
 *
 * Counter k falls in one level's range of counters (see ID_MARGIN for how many each holds). A
 * keyed permutation of that level's shell (its messages [2^d', 2^d) for a level of dimension d
 * after one of d'; [0, 2^12) for the first) turns k into the message, so every id of a level is a
 * word of its code (the window property) and the ids of all levels are distinct (the shells are
 * disjoint and the nested basis is independent); the order of allocation does not show. A keyed
 * 40-bit mask is then added: a coset of the code keeps the window property (the mask's bits are
 * known to the detector's side, never to viewers) and no viewer is handed a public code word such
 * as 00…0, which an unmarked copy would read as.
 */

/**
 * Each level holds at most 2^−20 of its shell's words (docs/forensics.md, "Viewer ids", "What a
 * verdict may claim"). Two or three colluders who splice their copies bit position by bit position can make a
 * word of the code without knowing anybody's id: a + b + c of three ids is a word of the same coset,
 * and two who compare their copies can aim at one inside where their ids differ. A word so made
 * belongs to a viewer only as often as the level is full, so counters go to the smallest level
 * whose shell still has room at that density: an aimed splice, or a leak that covers the level's
 * dimension, then names an innocent with chance ≤ 2^−20 ≈ 9.5 · 10^−7, below the 10^−6 a strong match
 * needs (src/domain/forensics/matching/id-levels.ts computes the figure from the candidates). Spread by a keyed
 * permutation over the whole shell, the taken words are a keyed sample, so a shorter window usually
 * names the leaker too (as with random ids). Viewers given ids at 2^−16 before keep them: the
 * counter goes on from where it was, and a level's later counters take offsets of its permutation
 * past those its earlier ones took (the identification figure counts whoever is in each level).
 * bench/framing and bench/shortest-leak measure the trade for other margins.
 */
export const ID_MARGIN = 20;

export interface Shell {
  level: CodeLevel;
  /** the first counter of the shell */
  start: bigint;
  /** how many counters it holds */
  size: bigint;
  /** the first message of the level's shell (words of this code and of no smaller one) */
  messageStart: bigint;
  /** how many messages the shell holds: the counters are spread over all of them */
  messageSpace: bigint;
}

/**
 * How many counters the levels up to this one hold: each level ⌊shell / 2^margin⌋ (so no level is
 * fuller than 2^−margin of its shell), the last one all of its shell.
 */
function countersUpTo(levelIndex: number, margin: number): bigint {
  let total = 0n;
  for (let i = 0; i <= levelIndex; i++) {
    const dimension = (CODE_LEVELS[i] as CodeLevel).dimension;
    const shell =
      (1n << BigInt(dimension)) - (i === 0 ? 0n : 1n << BigInt((CODE_LEVELS[i - 1] as CodeLevel).dimension));
    total += i === CODE_LEVELS.length - 1 ? shell : shell >> BigInt(margin);
  }
  return total;
}

const shellsByMargin = new Map<number, Shell[]>();

/**
 * Each level's shell: its counters and its messages, with `margin` spare dimensions (ID_MARGIN); worked out once per
 * margin.
 */
function shells(margin: number): Shell[] {
  const known = shellsByMargin.get(margin);
  if (known) return known;
  let start = 0n;
  let messageStart = 0n;
  const all = CODE_LEVELS.map((level, i) => {
    const end = countersUpTo(i, margin);
    const messageEnd = 1n << BigInt(level.dimension);
    const shell = { level, start, size: end - start, messageStart, messageSpace: messageEnd - messageStart };
    start = end;
    messageStart = messageEnd;
    return shell;
  });
  shellsByMargin.set(margin, all);
  return all;
}

/**
 * The shell of the level counter k is allocated from, with `margin` spare dimensions (ID_MARGIN).
 * Once the last level is full (past about 1.03 · 10^12 viewers), the counter goes on through the
 * words the margin left unused, from the largest level down, so the whole 2^40 is allocated: such
 * a shell's counters continue the permutation past the ones its level gave out first.
 */
export function shellOf(counter: bigint, margin = ID_MARGIN): Shell {
  const all = shells(margin);
  let next = 0n;
  for (const shell of all) {
    if (counter < shell.start + shell.size) return shell;
    next = shell.start + shell.size;
  }
  for (const shell of all.slice(0, -1).reverse()) {
    const spare = shell.messageSpace - shell.size;
    if (counter < next + spare) return { ...shell, start: next - shell.size, size: shell.messageSpace };
    next += spare;
  }
  throw new Error(`viewer id counter past the ${next} ids of 2^${WORD_BITS} words: ${counter}`);
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
export function messageFor(
  key: ViewerIdKey,
  counter: bigint,
  margin = ID_MARGIN,
): { message: bigint; level: CodeLevel } {
  const shell = shellOf(counter, margin);
  const offset = permuteWithin(
    key.permutation,
    `level ${shell.level.dimension}`,
    shell.messageSpace,
    counter - shell.start,
  );
  return { message: shell.messageStart + offset, level: shell.level };
}

/** The id of counter k, as a 40-bit word (mask included). */
export function viewerIdWord(key: ViewerIdKey, counter: bigint, margin = ID_MARGIN): bigint {
  return codeWord(messageFor(key, counter, margin).message) ^ key.mask;
}

/** The binaryId of counter k. */
export function viewerIdFor(key: ViewerIdKey, counter: bigint): string {
  return wordToBinaryId(viewerIdWord(key, counter));
}
