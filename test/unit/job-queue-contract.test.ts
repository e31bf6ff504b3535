import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestJobRow } from '../../src/db/repos/index.js';
import { queueIngest } from '../../src/domain/ingest/ingest-queue.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';

// The ingest queue as workers see it, on both dialects: each job is taken by one worker at a
// time (on Postgres, the pick is locked and skipped by the others), a lease that runs out gives
// the job to another worker, a job given back is queued again, and a cancelled or failed one
// keeps its source for a retry.

const LEASE = 60_000;

describe.each(DIALECTS)('the ingest queue on %s', (dialect) => {
  let t: TestApp;
  let n = 0;
  const queued = async (): Promise<IngestJobRow> => {
    const row: IngestJobRow = {
      ...{
        id: `job-${dialect}-${++n}`,
        status: 'queued',
        request: JSON.stringify({ title: `Film ${n}`, type: 'video', watermark: true }),
      },
      ...{
        sourceRef: `spool:${n}`,
        sourceName: 'film.mp4',
        sourceBytes: 1000,
        attempts: 0,
        leaseUntil: null,
        worker: null,
        progress: null,
      },
      ...{ contentId: null, result: null, failureReason: null, createdAt: t.clock.now() + n, finishedAt: null },
    };
    await t.ctx.repos.ingestJobs.insert(row);
    return row;
  };
  const claim = (worker: string) => t.ctx.repos.ingestJobs.claimNext(worker, t.clock.now(), t.clock.now() + LEASE);
  const failed = {
    status: 'failed',
    contentId: null,
    result: null,
    failureReason: 'test over',
    finishedAt: 1,
  } as const;
  // Jobs a test leaves taken or queued are taken once their leases lapse and ended, so the next test starts from an empty queue.
  const endAll = async () => {
    t.clock.advance(LEASE + 1);
    for (let row = await claim('cleaner'); row; row = await claim('cleaner'))
      await t.ctx.repos.ingestJobs.finish(row.id, 'cleaner', failed);
  };

  beforeAll(async () => {
    t = await makeTestApp(dialect);
  });
  afterAll(() => t.close());

  it('gives each of four workers claiming at once a different job, oldest first, and none to a fifth', async () => {
    const jobs = [await queued(), await queued(), await queued(), await queued()];
    const taken = await Promise.all(['w1', 'w2', 'w3', 'w4'].map(claim));
    expect(new Set(taken.map((r) => r?.id)).size).toBe(4);
    expect(taken.map((r) => r?.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(taken.every((r) => r?.status === 'running' && r.attempts === 1)).toBe(true);
    expect(await claim('w5')).toBeUndefined();
    await endAll();
  });

  it('gives a job whose lease ran out to another worker, counting the attempt; the first worker has lost it', async () => {
    const job = await queued();
    expect((await claim('dead'))?.id).toBe(job.id);
    expect(await claim('other')).toBeUndefined();
    t.clock.advance(LEASE + 1);
    const again = await claim('other');
    expect(again).toMatchObject({ id: job.id, worker: 'other', attempts: 2 });
    expect(await t.ctx.repos.ingestJobs.extendLease(job.id, 'dead', t.clock.now() + LEASE)).toBe(false);
    expect(await t.ctx.repos.ingestJobs.extendLease(job.id, 'other', t.clock.now() + LEASE)).toBe(true);
    // The first worker, come back from its stall, can no longer end the job the other one runs.
    expect(await t.ctx.repos.ingestJobs.finish(job.id, 'dead', { ...failed, status: 'done', contentId: 'stale' })).toBe(
      false,
    );
    expect(await t.ctx.repos.ingestJobs.find(job.id)).toMatchObject({
      status: 'running',
      worker: 'other',
      contentId: null,
    });
    await endAll();
  });

  it('queues a job given back by a stopping worker again, as if it had never been taken', async () => {
    const job = await queued();
    await claim('stopping');
    await t.ctx.repos.ingestJobs.setAttemptContent(job.id, 'stopping', 'content-of-the-attempt');
    await t.ctx.repos.ingestJobs.release(job.id, 'stopping');
    expect(await t.ctx.repos.ingestJobs.find(job.id)).toMatchObject({
      status: 'queued',
      worker: null,
      leaseUntil: null,
      attempts: 0,
      contentId: null,
    });
    expect(await claim('next')).toMatchObject({ id: job.id, attempts: 1 });
    await endAll();
  });

  it('gives each of five servers or workers claiming leak analyses at once a different case, and none to the last two', async () => {
    for (let i = 0; i < 3; i++) {
      await t.ctx.repos.forensicCases.insert({
        ...{
          id: `case-${dialect}-${i}`,
          organizationId: null,
          apiKeyId: null,
          contentId: 'c',
          contentType: 'video',
          status: 'processing',
          failureReason: null,
        },
        ...{
          uploadPath: `spool:${i}`,
          uploadName: 'leak.mp4',
          uploadBytes: 1,
          attempts: 0,
          leaseUntil: null,
          leasedBy: null,
          classification: null,
          binaryId: null,
          supportedBits: null,
        },
        ...{
          matchedViewerId: null,
          matchedSessionId: null,
          report: null,
          leakFrames: null,
          progress: null,
          createdAt: t.clock.now() + i,
          completedAt: null,
        },
      });
    }
    const now = t.clock.now();
    const taken = await Promise.all(
      Array.from({ length: 5 }, () => t.ctx.repos.forensicCases.claimNext(now, now + LEASE, 'p')),
    );
    expect(
      taken
        .filter(Boolean)
        .map((r) => r?.id)
        .sort(),
    ).toEqual([0, 1, 2].map((i) => `case-${dialect}-${i}`));
  });

  it('lets only the holder of a case keep or end it: a process whose lease lapsed learns it lost the case', async () => {
    const id = `case-${dialect}-0`;
    const cases = t.ctx.repos.forensicCases;
    t.clock.advance(LEASE + 1);
    expect(await cases.claim(id, t.clock.now(), t.clock.now() + LEASE, 'second')).toMatchObject({
      id,
      leasedBy: 'second',
      attempts: 2,
    });
    expect(await cases.extendLease(id, 'p', t.clock.now() + LEASE)).toBe(false);
    const outcome = {
      status: 'failed',
      failureReason: 'x',
      classification: null,
      binaryId: null,
      supportedBits: null,
      matchedViewerId: null,
    } as const;
    const ended = { ...outcome, matchedSessionId: null, report: null, leakFrames: null, completedAt: t.clock.now() };
    expect(await cases.finish(id, 'p', ended)).toBe(false);
    expect(await cases.find(id)).toMatchObject({ status: 'processing', leasedBy: 'second' });
    expect(await cases.extendLease(id, 'second', t.clock.now() + LEASE)).toBe(true);
    expect(await cases.finish(id, 'second', ended)).toBe(true);
    expect(await cases.find(id)).toMatchObject({ status: 'failed', leasedBy: null, leaseUntil: null });
  });

  it('never takes a job that ended', async () => {
    const job = await queued();
    await claim('w');
    expect(
      await t.ctx.repos.ingestJobs.finish(job.id, 'w', {
        status: 'done',
        contentId: 'c',
        result: '{}',
        failureReason: null,
        finishedAt: t.clock.now(),
      }),
    ).toBe(true);
    t.clock.advance(LEASE * 10);
    expect(await claim('late')).toBeUndefined();
    expect(await t.ctx.repos.ingestJobs.find(job.id)).toMatchObject({ status: 'done', sourceRef: null });
  });

  it('cancels a queued job for good, keeping its source for a retry, which queues it afresh', async () => {
    const jobs = t.ctx.repos.ingestJobs;
    const job = await queued();
    expect(await jobs.cancel(job.id, t.clock.now())).toMatchObject({ status: 'cancelled', sourceRef: job.sourceRef });
    expect(await jobs.cancel(job.id, t.clock.now())).toBeUndefined();
    t.clock.advance(LEASE * 10);
    expect(await claim('w')).toBeUndefined();
    expect(await jobs.usesSource(job.sourceRef as string)).toBe(true);
    expect(await jobs.requeue(job.id)).toMatchObject({ status: 'queued', attempts: 0, finishedAt: null });
    expect(await jobs.requeue(job.id)).toBeUndefined();
    expect(await claim('w')).toMatchObject({ id: job.id, attempts: 1 });
    await endAll();
  });

  it('stops a cancelled running job at its next renewal; a done end that came first still counts', async () => {
    const jobs = t.ctx.repos.ingestJobs;
    const job = await queued();
    await claim('w');
    expect(await jobs.cancel(job.id, t.clock.now())).toMatchObject({ status: 'cancelled', worker: 'w' });
    expect(await jobs.extendLease(job.id, 'w', t.clock.now() + LEASE)).toBe(false);
    expect(await jobs.finish(job.id, 'w', failed)).toBe(false);
    expect(await jobs.finish(job.id, 'other', { ...failed, status: 'done' })).toBe(false);
    expect(await jobs.finish(job.id, 'w', { ...failed, status: 'done', contentId: 'made', failureReason: null })).toBe(
      true,
    );
    expect(await jobs.find(job.id)).toMatchObject({ status: 'done', contentId: 'made', sourceRef: null });
  });

  it('keeps the source of a failed job until its retry window ends, then lets it go', async () => {
    const jobs = t.ctx.repos.ingestJobs;
    const job = await queued();
    await claim('w');
    expect(await jobs.finish(job.id, 'w', { ...failed, finishedAt: t.clock.now() })).toBe(true);
    expect(await jobs.find(job.id)).toMatchObject({ status: 'failed', sourceRef: job.sourceRef });
    // Earlier tests' jobs ended failed long ago, and keep their sources too.
    const kept = async (endedBy: number) => (await jobs.keptSources(endedBy, 100)).map((r) => r.id);
    expect(await kept(t.clock.now() - 1)).not.toContain(job.id);
    expect(await kept(t.clock.now())).toContain(job.id);
    expect(await jobs.dropSource(job.id)).toBe(true);
    expect(await kept(t.clock.now())).not.toContain(job.id);
    expect(await jobs.requeue(job.id)).toBeUndefined();
  });

  it('refuses to queue what is not media, keeping nothing in the spool', async () => {
    const notMedia = path.join(t.dir, 'notes.mp4');
    fs.writeFileSync(notMedia, 'not a film');
    const kept = () =>
      fs.existsSync(t.ctx.storage.spool.localDir) ? fs.readdirSync(t.ctx.storage.spool.localDir).length : 0;
    const before = kept();
    await expect(
      queueIngest(t.ctx, { input: notMedia, title: 'Notes', type: 'video', watermark: true }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(
      queueIngest(t.ctx, { input: path.join(t.dir, 'missing.mp4'), title: 'Gone', type: 'video', watermark: true }),
    ).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringContaining('does not exist'),
    });
    expect(kept()).toBe(before);
  });
});
