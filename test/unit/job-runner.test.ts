import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { Context } from '../../src/context.js';
import { LeasedJobRunner } from '../../src/domain/jobs/leased-job-runner.js';
import type { LeasedJobRunnerOptions, LeasedJobs, Renewal } from '../../src/domain/jobs/leased-jobs.js';
import { DrmError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';

// The one job runner behind the ingest worker and the forensics queue, over a table kept in
// memory: what it stores when a job ends, fails, is cancelled, loses its lease or is stopped.

interface Job {
  id: string;
  attempts: number;
  status: 'waiting' | 'running' | 'done' | 'failed';
  holder: string | null;
  reason?: string;
}

/** A table of jobs and a work function the test steers: each job's work waits for `finish(id)` or its signal. */
function table(ids: string[], attempts = 0) {
  const rows = ids.map((id): Job => ({ id, attempts, status: 'waiting', holder: null }));
  const finishers = new Map<string, (r: string) => void>();
  const started: string[] = [];
  const renewals: Renewal[] = [];
  const released: string[] = [];
  const ended: string[] = [];
  let running = 0;
  let most = 0;
  let renewal: Renewal = 'held';
  const mine = (job: Job, holder: string) => {
    const row = rows.find((r) => r.id === job.id) as Job;
    return row.status === 'running' && row.holder === holder ? row : undefined;
  };
  const jobs: LeasedJobs<Job, string> = {
    noun: 'test job',
    label: 'test',
    idField: 'jobId',
    id: (job) => job.id,
    attempts: (job) => job.attempts,
    async claimNext(holder) {
      const row = rows.find((r) => r.status === 'waiting');
      if (!row) return undefined;
      Object.assign(row, { status: 'running', holder, attempts: row.attempts + 1 });
      return { ...row };
    },
    async renew() {
      renewals.push(renewal);
      return renewal;
    },
    async release(job, holder) {
      const row = mine(job, holder);
      if (row) Object.assign(row, { status: 'waiting', holder: null, attempts: row.attempts - 1 });
      released.push(job.id);
    },
    run: (job, signal) =>
      new Promise<string>((resolve, reject) => {
        started.push(job.id);
        most = Math.max(most, ++running);
        const end = () => running--;
        finishers.set(job.id, (r) => {
          end();
          resolve(r);
        });
        signal.addEventListener('abort', () => {
          end();
          reject(signal.reason);
        });
      }),
    async succeed(job, holder, result) {
      const row = mine(job, holder);
      if (row) Object.assign(row, { status: 'done', reason: result });
      return Boolean(row);
    },
    async fail(job, holder, reason) {
      const row = mine(job, holder);
      if (row) Object.assign(row, { status: 'failed', reason });
      return Boolean(row);
    },
    async ended(job, how) {
      ended.push(`${job.id}:${how}`);
    },
  };
  return {
    rows,
    jobs,
    started,
    renewals,
    released,
    ended,
    most: () => most,
    finish: (id: string, result = 'ok') => finishers.get(id)?.(result),
    renewWith: (r: Renewal) => {
      renewal = r;
    },
  };
}

const ctx = { clock: new ManualClock(), log: createLogger('silent') } as unknown as Context;
const options = (o: Partial<LeasedJobRunnerOptions> = {}): LeasedJobRunnerOptions => ({
  holder: 'me',
  leaseMs: 30,
  pollMs: 10,
  onStop: 'finish',
  ...o,
});
const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
};

describe('the leased job runner', () => {
  it('runs at most `concurrency` jobs at once, takes the next when one ends, and stores each end', async () => {
    const t = table(['a', 'b', 'c']);
    const runner = new LeasedJobRunner(ctx, t.jobs, options({ concurrency: 2 }));
    runner.start();
    await until(() => t.started.length === 2);
    expect(runner.runningIds.sort()).toEqual(['a', 'b']);
    t.finish('a');
    await until(() => t.started.length === 3);
    t.finish('b');
    t.finish('c', 'third');
    await until(() => t.rows.every((r) => r.status === 'done'));
    expect(t.most()).toBe(2);
    expect(t.rows.find((r) => r.id === 'c')?.reason).toBe('third');
    expect(t.ended.sort()).toEqual(['a:succeeded', 'b:succeeded', 'c:succeeded']);
    await runner.stop();
  });

  it('renews the lease while a job runs; a lease found lost stops the work and stores nothing', async () => {
    const t = table(['a']);
    const runner = new LeasedJobRunner(ctx, t.jobs, options());
    runner.start();
    await until(() => t.renewals.length >= 2);
    t.renewWith('lost');
    await until(() => runner.runningIds.length === 0);
    // The job is left as the process that holds it now has it.
    expect(t.rows[0]).toMatchObject({ status: 'running', holder: 'me' });
    expect(t.rows[0]?.reason).toBeUndefined();
    expect(t.ended).toEqual([]);
    await runner.stop();
  });

  it('stops the work of a job cancelled by hand at its next renewal, leaving the cancel as stored', async () => {
    const t = table(['a']);
    const runner = new LeasedJobRunner(ctx, t.jobs, options());
    runner.start();
    await until(() => t.started.length === 1);
    t.renewWith('cancelled');
    await until(() => runner.runningIds.length === 0);
    expect(t.rows[0]?.reason).toBeUndefined();
    expect(t.released).toEqual([]);
    await runner.stop();
  });

  it('on stop, gives a running job back at once with `give-back`, and lets it end with `finish`', async () => {
    const back = table(['a']);
    const giving = new LeasedJobRunner(ctx, back.jobs, options({ onStop: 'give-back' }));
    giving.start();
    await until(() => back.started.length === 1);
    await giving.stop();
    expect(back.rows[0]).toMatchObject({ status: 'waiting', holder: null, attempts: 0 });
    expect(back.released).toEqual(['a']);

    const end = table(['a', 'b']);
    const finishing = new LeasedJobRunner(ctx, end.jobs, options({ onStop: 'finish' }));
    finishing.start();
    await until(() => end.started.length === 1);
    const stopped = finishing.stop();
    end.finish('a');
    await stopped;
    expect(end.rows.map((r) => r.status)).toEqual(['done', 'waiting']);
  });

  it('fails a job that already took its worker down `maxAttempts` times, without running it', async () => {
    const t = table(['a'], 3);
    const runner = new LeasedJobRunner(ctx, t.jobs, options({ maxAttempts: 3 }));
    await runner.drain();
    expect(t.started).toEqual([]);
    expect(t.rows[0]).toMatchObject({ status: 'failed', reason: 'test failed: the test stopped its worker 3 times' });
    expect(t.ended).toEqual(['a:failed']);
  });

  it("stores a failure in the work's own words, and a caller's abort as cancelled", async () => {
    const t = table(['a', 'b']);
    const runner = new LeasedJobRunner(ctx, t.jobs, options());
    const refused = runner.take((holder, now, until) => t.jobs.claimNext(holder, now, until), {
      run: async () => {
        throw new DrmError('BAD_REQUEST', 'not a film');
      },
    });
    expect(await refused).toBe(true);
    const caller = new AbortController();
    const cancelled = runner.take((holder, now, until) => t.jobs.claimNext(holder, now, until), {
      signal: caller.signal,
    });
    await until(() => t.started.includes('b'));
    caller.abort();
    expect(await cancelled).toBe(true);
    expect(t.rows.map((r) => [r.status, r.reason])).toEqual([
      ['failed', 'not a film'],
      ['failed', 'test cancelled'],
    ]);
    expect(await runner.take(async () => undefined)).toBe(false);
  });

  it('gives back a job claimed as the stop came, before any work', async () => {
    const t = table(['a']);
    const claimed = t.jobs.claimNext;
    let stopping: Promise<void> | undefined;
    const runner = new LeasedJobRunner(
      ctx,
      {
        ...t.jobs,
        claimNext: async (...a) => {
          stopping = runner.stop();
          return claimed(...a);
        },
      },
      options(),
    );
    runner.start();
    await until(() => stopping !== undefined);
    await stopping;
    expect(t.started).toEqual([]);
    expect(t.rows[0]).toMatchObject({ status: 'waiting', attempts: 0 });
  });
});
