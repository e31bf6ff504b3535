import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { batchPerTurn } from '../../src/db/per-turn.js';

describe('sharing one database call among the callers of one event-loop turn', () => {
  it('callers with the same key in one turn share one call; other keys get their own', async () => {
    const calls: Array<[string, number]> = [];
    const get = batchPerTurn(
      (k: string) => k,
      async (k, n) => {
        calls.push([k, n]);
        return () => `value of ${k}`;
      },
    );
    const results = await Promise.all([get('a'), get('a'), get('b'), get('a')]);
    expect(results).toEqual(['value of a', 'value of a', 'value of b', 'value of a']);
    expect(calls).toEqual([
      ['a', 3],
      ['b', 1],
    ]);
  });

  it('a caller in a later turn gets a new call, made after it arrived', async () => {
    let state = 1;
    const calls: number[] = [];
    const read = batchPerTurn(
      () => 'k',
      async (_k, n) => {
        calls.push(n);
        const seen = state;
        return () => seen;
      },
    );
    expect(await read('k')).toBe(1);
    state = 2;
    await nextTurn();
    expect(await read('k')).toBe(2);
    expect(calls).toEqual([1, 1]);
  });

  it('each caller can get its own result, such as its own count', async () => {
    let total = 10;
    const hit = batchPerTurn(
      () => 'bucket',
      async (_k, n) => {
        total += n;
        const first = total - n + 1;
        return (i) => first + i;
      },
    );
    expect(await Promise.all([hit('x'), hit('x'), hit('x')])).toEqual([11, 12, 13]);
  });

  it('a failed call rejects every caller that shared it, and the next turn tries again', async () => {
    let fail = true;
    const get = batchPerTurn(
      (k: string) => k,
      async () => {
        if (fail) throw new Error('database down');
        return () => 'ok';
      },
    );
    const outcomes = await Promise.allSettled([get('a'), get('a')]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await get('a')).toBe('ok');
  });
});
