import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CODE_LEVELS,
  codeWord,
  degree,
  messageFromWindow,
  NESTED_BASIS,
  polyDivMod,
  polyMul,
  rankOf,
  windowOf,
} from '../../src/domain/identity/nested-code.js';
import {
  ID_MARGIN,
  messageFor,
  shellOf,
  viewerIdFor,
  viewerIdKey,
  viewerIdWord,
} from '../../src/domain/identity/viewer-ids.js';

// Viewer ids as words of nested cyclic codes of length 40 (docs/forensics.md, "Viewer ids"):
// every level's ids are named by any `dimension` consecutive segments, allocation is a pure
// function of a counter, and it holds far past the old random allocation's cap of ~60,000.

const X40_MINUS_1 = (1n << 40n) | 1n;
const inCode = (word: bigint, check: bigint) => polyDivMod(polyMul(word, check), X40_MINUS_1).remainder === 0n;
const randomBelow = (bits: number) => BigInt(`0x${randomBytes(8).toString('hex')}`) & ((1n << BigInt(bits)) - 1n);
const key = viewerIdKey(Buffer.alloc(32, 42));

describe('the nested codes', () => {
  it('step 12, 13, …, 20 by (x + 1), then 24 … 40 by Φ5, each a divisor of x^40 − 1 dividing the next', () => {
    expect(CODE_LEVELS.map((l) => l.dimension)).toEqual([12, 13, 14, 15, 16, 17, 18, 19, 20, 24, 28, 32, 36, 40]);
    CODE_LEVELS.forEach((level, i) => {
      expect(degree(level.check)).toBe(level.dimension);
      expect(polyMul(level.check, level.generator)).toBe(X40_MINUS_1);
      const next = CODE_LEVELS[i + 1];
      if (next) expect(polyDivMod(next.check, level.check).remainder).toBe(0n);
    });
  });

  it("have a nested basis: each level's first `dimension` words are independent words of its code", () => {
    expect(rankOf(NESTED_BASIS)).toBe(40);
    for (const level of CODE_LEVELS) {
      const words = NESTED_BASIS.slice(0, level.dimension);
      expect(rankOf(words)).toBe(level.dimension);
      expect(words.every((w) => inCode(w, level.check))).toBe(true);
    }
  });

  it('name a word from any `dimension` cyclically consecutive bits, at every level and every start', () => {
    let windows = 0;
    for (const level of CODE_LEVELS) {
      for (let start = 0; start < 40; start++) {
        expect(
          rankOf(NESTED_BASIS.slice(0, level.dimension).map((w) => windowOf(w, start, level.dimension))),
          `level ${level.dimension} at ${start}`,
        ).toBe(level.dimension);
        const message = randomBelow(level.dimension);
        expect(messageFromWindow(level, start, windowOf(codeWord(message), start, level.dimension))).toBe(message);
        windows++;
      }
    }
    expect(windows).toBe(14 * 40);
  });
});

describe('allocation from a counter', () => {
  it('takes a keyed sample of at most 2^-20 of each shell: the first 4,095 counters get distinct messages inside levels 24, 28 and 32', () => {
    const messages = new Set<bigint>();
    const perLevel = new Map<number, number>();
    for (let k = 0n; k < 4095n; k++) {
      const { message, level } = messageFor(key, k);
      const shell = shellOf(k);
      expect(shell.level).toBe(level);
      expect(message >= shell.messageStart && message < shell.messageStart + shell.messageSpace).toBe(true);
      perLevel.set(level.dimension, (perLevel.get(level.dimension) ?? 0) + 1);
      messages.add(message);
    }
    expect(messages.size).toBe(4095);
    // ⌊shell / 2^20⌋ counters a level: none below 24 (level 20's shell is 2^19), then 15, 240, 3,840
    expect(Object.fromEntries(perLevel)).toEqual({ 24: 15, 28: 240, 32: 3840 });
    expect(shellOf(4095n).level.dimension).toBe(36);
    for (const k of [0n, 15n, 255n, 4095n]) {
      const shell = shellOf(k);
      expect(Number(shell.size) / Number(shell.messageSpace)).toBeLessThanOrEqual(2 ** -ID_MARGIN);
    }
  });

  it("spreads a level's counters over its whole shell, not its start", () => {
    const shell = shellOf(300n);
    const offsets = Array.from(
      { length: 200 },
      (_, i) => messageFor(key, shell.start + BigInt(i)).message - shell.messageStart,
    );
    // 200 draws from a shell of 2^28 − 2^24 messages: their maximum is near the top, far past 200
    expect(offsets.reduce((a, b) => (a > b ? a : b)) > shell.messageSpace / 2n).toBe(true);
  });

  it('does not show the order of allocation: consecutive counters get unrelated ids', () => {
    const ids = Array.from({ length: 200 }, (_, i) => viewerIdWord(key, BigInt(i)));
    const distances = ids
      .slice(1)
      .map((id, i) => [...(id ^ (ids[i] as bigint)).toString(2)].filter((b) => b === '1').length);
    const mean = distances.reduce((a, b) => a + b, 0) / distances.length;
    expect(mean).toBeGreaterThan(4);
    expect(viewerIdFor(viewerIdKey(Buffer.alloc(32, 43)), 5n)).not.toBe(viewerIdFor(key, 5n));
  });

  it.each([
    [10_000n, 36],
    [60_000n, 36],
    [1_000_000n, 40],
    [100_000_000n, 40],
    [100_000_000_000n, 40],
  ])(
    'holds at counter %s (level %i): distinct ids, each in its code, named by any window of its dimension',
    (around, dimension) => {
      const shell = shellOf(around);
      expect(shell.level.dimension).toBe(dimension);
      const counters = Array.from({ length: 400 }, (_, i) =>
        i < 200 ? around + BigInt(i) : shell.start + (randomBelow(40) % shell.size),
      );
      const words = new Map<bigint, bigint>();
      for (const counter of counters) {
        const word = viewerIdWord(key, counter);
        const { message, level } = messageFor(key, counter);
        expect(level).toBe(shell.level);
        expect(inCode(word ^ key.mask, level.check)).toBe(true);
        const start = Number(randomBelow(6) % 40n);
        expect(messageFromWindow(level, start, windowOf(word ^ key.mask, start, dimension))).toBe(message);
        const earlier = words.get(word);
        expect(earlier === undefined || earlier === counter, `counters ${earlier} and ${counter} share an id`).toBe(
          true,
        );
        words.set(word, counter);
      }
    },
  );

  it('with no margin fills each level before the next (levels 12 and 13 for the first 8,192 counters)', () => {
    const messages = new Set<bigint>();
    for (let k = 0n; k < 8192n; k++) {
      const { message, level } = messageFor(key, k, 0);
      expect(level.dimension).toBe(k < 4096n ? 12 : 13);
      expect(k < 4096n ? message < 4096n : message >= 4096n && message < 8192n).toBe(true);
      messages.add(message);
    }
    expect(messages.size).toBe(8192);
  });

  it('fills the last level (2^40 − 2^36 + 65,535 viewers), then the words the margin left unused, up to the whole 2^40', () => {
    const lastLevelFull = (1n << 40n) - (1n << 36n) + 65_535n;
    expect(shellOf(lastLevelFull - 1n).level.dimension).toBe(40);
    expect(shellOf(lastLevelFull).level.dimension).toBe(36);
    // The last 8,192 counters are the smallest levels' words, every one of them: 12's, after 13's.
    const top = 1n << 40n;
    const level12 = new Set<bigint>();
    const level13 = new Set<bigint>();
    for (let k = top - 8192n; k < top; k++) {
      const { message, level } = messageFor(key, k);
      (k < top - 4096n ? level13 : level12).add(message);
      expect(level.dimension).toBe(k < top - 4096n ? 13 : 12);
    }
    expect([level12.size, Math.min(...[...level12].map(Number)), Math.max(...[...level12].map(Number))]).toEqual([
      4096, 0, 4095,
    ]);
    expect([level13.size, Math.min(...[...level13].map(Number)), Math.max(...[...level13].map(Number))]).toEqual([
      4096, 4096, 8191,
    ]);
    // Level 36's leftover words are not the ones it gave out first.
    const first = new Set(
      Array.from({ length: 300 }, (_, i) => messageFor(key, shellOf(4095n).start + BigInt(i)).message),
    );
    for (let i = 0n; i < 300n; i++) expect(first.has(messageFor(key, lastLevelFull + i).message)).toBe(false);
    expect(() => shellOf(top)).toThrow(/past the/);
    expect(() => shellOf(top, 0)).toThrow(/past the/);
  });
});

describe('framing by colluders (why each level keeps only 2^-20 of its words)', () => {
  // Three colluders who take, wherever their copies differ, the odd one out read as a XOR b XOR c:
  // a word of the same coset of the same code, whoever they are and whatever the key.
  const seeded = (seed: number) => () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const framedBy3WaySplices = (margin: number) => {
    const ids = Array.from({ length: 4096 }, (_, i) => viewerIdWord(key, BigInt(i), margin));
    const taken = new Set(ids);
    const random = seeded(17);
    const pick = () => ids[Math.floor(random() * ids.length)] as bigint;
    let framed = 0;
    for (let t = 0; t < 2000; t++) {
      const [a, b, c] = [pick(), pick(), pick()];
      const spliced = a ^ b ^ c;
      expect(inCode(spliced ^ key.mask, shellOf(4095n, margin).level.check)).toBe(true);
      if (spliced !== a && spliced !== b && spliced !== c && taken.has(spliced)) framed++;
    }
    return framed;
  };

  it('with every word of the code taken, most such splices spell an innocent viewer', () => {
    expect(framedBy3WaySplices(0)).toBeGreaterThan(1500);
  });

  it('with ID_MARGIN spare dimensions, none of 2,000 does', () => {
    expect(ID_MARGIN).toBe(20);
    expect(framedBy3WaySplices(ID_MARGIN)).toBe(0);
  });
});
