import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { createContext } from '../../src/create-context.js';
import { createLogger } from '../../src/log.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';

const HOUR = 3_600_000;
const burst = (ctx: Context, bucket: string, window: number, n: number, limit?: number) =>
  Promise.all(Array.from({ length: n }, () => ctx.repos.rateCounters.hit(bucket, window, limit)));
/** What the database holds for a window, read as the number one more request gets from a process holding none. */
const stored = async (reader: Context, bucket: string, window: number) =>
  (await reader.repos.rateCounters.hit(bucket, window)) - 1;

describe.each(DIALECTS)('rate counters on %s', (dialect) => {
  let t: TestApp;
  let other: Context;
  let reader: Context;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
    // more server processes on the same database: one that counts, one that only reads
    other = await createContext(t.ctx.config, { clock: t.clock, log: createLogger('silent') });
    reader = await createContext(t.ctx.config, { clock: t.clock, log: createLogger('silent') });
  });
  afterAll(async () => {
    await Promise.all([other.db.close(), reader.db.close()]);
    await t.close();
  });

  it('a busy bucket with room under its limit adds numbers ahead, and one process still hands them out in order', async () => {
    const window = 1000 * HOUR;
    const numbers: number[] = [];
    for (let turn = 0; turn < 6; turn++) numbers.push(...(await burst(t.ctx, 'org:busy', window, 10, 10_000_000)));
    expect(numbers).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    const count = await stored(reader, 'org:busy', window);
    expect(count).toBeGreaterThan(60);
    expect(count).toBeLessThanOrEqual(60 + 64);
  });

  it('adds nothing ahead for a lone request, nor where a thousandth of what is left is under one', async () => {
    const window = 1001 * HOUR;
    for (let i = 0; i < 3; i++) await t.ctx.repos.rateCounters.hit('org:lone', window, 10_000_000);
    expect(await stored(reader, 'org:lone', window)).toBe(3);
    for (let turn = 0; turn < 3; turn++) await burst(t.ctx, 'org:small', window, 10, 1000);
    expect(await stored(reader, 'org:small', window)).toBe(30);
  });

  it("a turn that comes while its bucket's statement is in flight waits for it: numbers in the order asked", async () => {
    const window = 1003 * HOUR;
    expect(await burst(t.ctx, 'org:overlap', window, 2, 10_000_000)).toEqual([1, 2]);
    // Each of the three then reserves ahead; a turn that did not wait would overwrite what the
    // one before reserved, and the numbers after it would jump.
    const first = burst(t.ctx, 'org:overlap', window, 20, 10_000_000);
    await new Promise((r) => setImmediate(r));
    const second = burst(t.ctx, 'org:overlap', window, 20, 10_000_000);
    await new Promise((r) => setImmediate(r));
    const third = burst(t.ctx, 'org:overlap', window, 20, 10_000_000);
    const numbers = [...(await first), ...(await second), ...(await third)];
    numbers.push(...(await burst(t.ctx, 'org:overlap', window, 20, 10_000_000)));
    expect(numbers).toEqual(Array.from({ length: 80 }, (_, i) => i + 3));
  });

  it('two processes on one database never hand out the same number', async () => {
    const window = 1002 * HOUR;
    const numbers: number[] = [];
    for (let turn = 0; turn < 5; turn++) {
      const [mine, theirs] = await Promise.all([
        burst(t.ctx, 'org:shared', window, 8, 10_000_000),
        burst(other, 'org:shared', window, 8, 10_000_000),
      ]);
      numbers.push(...mine, ...theirs);
    }
    expect(new Set(numbers).size).toBe(80);
    expect(Math.min(...numbers)).toBe(1);
    expect(Math.max(...numbers)).toBeLessThanOrEqual(await stored(reader, 'org:shared', window));
  });
});
