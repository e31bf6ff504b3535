import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseRow, IngestJobRow } from '../../src/db/repos/index.js';
import type { Overview } from '../../src/domain/operations/overview.js';
import { asAdmin, billedOrg, stream } from '../helpers/billing.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';

// What drm top shows, read from the database (every server's traffic buckets,
// sessions, the forensics queue, webhooks, cases, the billing period) at GET /api/v1/admin/overview.

const caseRow = (t: TestApp, contentId: string, fields: Partial<CaseRow>): CaseRow => ({
  ...{
    id: randomUUID(),
    organizationId: null,
    apiKeyId: null,
    contentId,
    contentType: 'video',
    status: 'processing',
    failureReason: null,
  },
  ...{
    uploadPath: null,
    uploadName: null,
    uploadBytes: null,
    attempts: 0,
    leaseUntil: null,
    leasedBy: null,
    classification: null,
    binaryId: null,
  },
  ...{
    supportedBits: null,
    matchedViewerId: null,
    matchedSessionId: null,
    report: null,
    progress: null,
    leakFrames: null,
    createdAt: t.clock.now(),
    completedAt: null,
  },
  ...fields,
});

const jobRow = (t: TestApp, title: string, fields: Partial<IngestJobRow>): IngestJobRow => ({
  ...{
    id: randomUUID(),
    status: 'queued',
    request: JSON.stringify({ title, type: 'video', watermark: true }),
    sourceRef: null,
    sourceName: `${title}.mp4`,
    sourceBytes: 1000,
  },
  ...{
    attempts: 0,
    leaseUntil: null,
    worker: null,
    progress: null,
    contentId: null,
    result: null,
    failureReason: null,
    createdAt: t.clock.now(),
    finishedAt: null,
  },
  ...fields,
});

describe.each(DIALECTS)('the live overview on %s', (dialect) => {
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof asAdmin>>;
  let org: Awaited<ReturnType<typeof billedOrg>>;

  const overview = async (): Promise<Overview> => {
    const res = await admin('GET', '/api/v1/admin/overview');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    return (await res.json()) as Overview;
  };

  beforeAll(async () => {
    t = await makeTestApp(dialect);
    admin = await asAdmin(t);
    org = await billedOrg(t);
  });
  afterAll(() => t.close());

  it('needs an admin token: none, or an API key, is refused', async () => {
    const none = await t.request('GET', '/api/v1/admin/overview');
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: 'INVALID_ADMIN_TOKEN' });
    const keyed = await t.request('GET', '/api/v1/admin/overview', { key: org.apiKey });
    expect(keyed.status).toBe(401);
  });

  it("adds every server's requests, refusals, errors and new streams of the last minute", async () => {
    await t.traffic.flush();
    await t.ctx.repos.traffic.prune(Number.MAX_SAFE_INTEGER);
    await stream(t, org.apiKey, org.content);
    await stream(t, org.apiKey, org.content);
    await t.request('GET', '/api/v1/nothing-here');
    await t.traffic.flush();
    // A second server on the same database counted a 500 and 1 MB of segments in the same bucket.
    const bucketStart = Math.floor(t.clock.now() / 5000) * 5000;
    await t.ctx.repos.traffic.add([
      {
        bucketStart,
        instanceId: 'other-server',
        requests: 10,
        clientErrors: 0,
        serverErrors: 1,
        segmentBytes: 1_000_000,
        sessionsStarted: 0,
      },
    ]);

    // The bucket still filling is not read: its counts reach the database at the next flush.
    expect((await overview()).traffic.requestsPerMinute).toBe(0);
    t.clock.advance(5000);
    const o = await overview();
    const perMinute = (n: number) => (n * 60) / o.traffic.windowSeconds;
    expect(o.traffic.windowSeconds).toBe(60);
    expect(o.traffic.servers).toBe(2);
    // 2 sessions + 1 unknown route here, 10 there; the overview's own request counts once it is flushed, not yet
    expect(o.traffic.requestsPerMinute).toBeCloseTo(perMinute(13), 0);
    expect(o.traffic.clientErrorsPerMinute).toBeCloseTo(perMinute(1), 0);
    expect(o.traffic.serverErrorsPerMinute).toBeCloseTo(perMinute(1), 0);
    expect(o.traffic.streamsPerMinute).toBeCloseTo(perMinute(2), 0);
    expect(o.traffic.segmentBytesPerSecond).toBe(Math.round(1_000_000 / 60));
  });

  it('keeps counts a failed flush could not write for the next one', async () => {
    await t.traffic.flush();
    await t.ctx.repos.traffic.prune(Number.MAX_SAFE_INTEGER);
    await t.request('GET', '/api/v1/nothing-here');
    const add = t.ctx.repos.traffic.add;
    t.ctx.repos.traffic.add = () => Promise.reject(new Error('database away'));
    await expect(t.traffic.flush()).rejects.toThrow('database away');
    t.ctx.repos.traffic.add = add;
    await t.request('GET', '/api/v1/nothing-here');
    await t.traffic.flush();
    expect((await t.ctx.repos.traffic.totalsBetween(0, Number.MAX_SAFE_INTEGER)).clientErrors).toBe(2);
  });

  it('shows active sessions, the queue with a running analysis and its progress, webhooks and the billing period', async () => {
    const now = t.clock.now();
    const running = caseRow(t, org.content.id, {
      leaseUntil: now + 60_000,
      attempts: 1,
      progress: JSON.stringify({ stage: 'detect', done: 3, total: 12 }),
    });
    const waiting = caseRow(t, org.content.id, { createdAt: now + 1 });
    const decided = caseRow(t, org.content.id, {
      status: 'completed',
      classification: 'strong_match',
      binaryId: '1'.repeat(40),
      completedAt: now,
    });
    for (const row of [running, waiting, decided]) await t.ctx.repos.forensicCases.insert(row);

    const o = await overview();
    // two sessions started, neither sent a segment: open, not active (overview-now-playing.test.ts)
    expect(o.sessions).toEqual({ active: 0, open: 2 });
    expect(o.forensics).toMatchObject({ waiting: 1, running: 1 });
    expect(o.forensics.queue).toEqual([
      expect.objectContaining({ caseId: running.id, state: 'running', stage: 'detect', percent: 25 }),
      expect.objectContaining({ caseId: waiting.id, state: 'waiting', stage: null, percent: null }),
    ]);
    expect(o.recentCases.map((c) => c.caseId)).toEqual(expect.arrayContaining([running.id, waiting.id, decided.id]));
    expect(o.recentCases.find((c) => c.caseId === decided.id)).toMatchObject({
      classification: 'strong_match',
      binaryId: '1'.repeat(40),
    });
    expect(o.billing).toMatchObject({ streams: 2, organizations: 1, openInvoices: 0, openInvoicesApusd: '0.00' });
    expect(o.webhooks).toMatchObject({ backlog: 0, failed: 0 });
  });

  it('lets a running case whose lease ran out count as waiting, and the minute of traffic pass', async () => {
    t.clock.advance(2 * 60_000);
    const o = await overview();
    expect(o.forensics).toMatchObject({ waiting: 2, running: 0 });
    expect(o.traffic).toMatchObject({ requestsPerMinute: 0, servers: 0, segmentBytesPerSecond: 0 });
    expect(o.sessions.open).toBe(2);
  });

  it('counts the whole queue, not only the cases it lists, and lists running cases first', async () => {
    const now = t.clock.now();
    for (let i = 0; i < 22; i++)
      await t.ctx.repos.forensicCases.insert(caseRow(t, org.content.id, { createdAt: now + i }));
    const running = caseRow(t, org.content.id, { createdAt: now + 100, leaseUntil: now + 60_000, attempts: 1 });
    await t.ctx.repos.forensicCases.insert(running);
    const o = await overview();
    expect(o.forensics).toMatchObject({ waiting: 24, running: 1 });
    expect(o.forensics.queue).toHaveLength(20);
    expect(o.forensics.queue[0]).toMatchObject({ caseId: running.id, state: 'running' });
  });

  it('shows the ingest queue: waiting (a lapsed lease included), running with stage and worker, failures of the last hour', async () => {
    const now = t.clock.now();
    const ingest = t.ctx.repos.ingestJobs;
    const running = jobRow(t, 'Big Buck Bunny', {
      status: 'running',
      worker: 'gpu-1:4242',
      attempts: 2,
      leaseUntil: now + 60_000,
      createdAt: now - 5000,
    });
    running.progress = JSON.stringify({ stage: 'marking A and B', done: 3, total: 12 });
    const rows = [
      running,
      jobRow(t, 'queued', {}),
      // its worker died: the lease ran out and the next worker will take it
      jobRow(t, 'orphaned', { status: 'running', worker: 'gone:1', attempts: 1, leaseUntil: now - 1 }),
      jobRow(t, 'done', { status: 'done', contentId: org.content.id, finishedAt: now - 1000 }),
      jobRow(t, 'old failure', { status: 'failed', failureReason: 'two hours ago', finishedAt: now - 2 * 3_600_000 }),
      jobRow(t, 'failed first', {
        status: 'failed',
        failureReason: 'the source has no video stream',
        finishedAt: now - 30 * 60_000,
      }),
    ];
    const newest = jobRow(t, 'failed last', {
      status: 'failed',
      failureReason: 'ingest failed: internal error',
      finishedAt: now - 60_000,
    });
    for (const row of [...rows, newest]) await ingest.insert(row);

    const o = await overview();
    expect(o.ingest).toEqual({
      waiting: 2,
      running: 1,
      jobs: [
        {
          jobId: running.id,
          title: 'Big Buck Bunny',
          type: 'video',
          worker: 'gpu-1:4242',
          stage: 'marking A and B',
          percent: 25,
          attempts: 2,
          queuedAt: new Date(now - 5000).toISOString(),
        },
      ],
      failedLastHour: 2,
      lastFailure: {
        jobId: newest.id,
        title: 'failed last',
        reason: 'ingest failed: internal error',
        at: new Date(now - 60_000).toISOString(),
      },
    });
  });

  it('counts every running ingest and lists the oldest ten; an hour later the failures are gone', async () => {
    const now = t.clock.now();
    for (let i = 0; i < 11; i++) {
      await t.ctx.repos.ingestJobs.insert(
        jobRow(t, `film ${i}`, {
          status: 'running',
          worker: `w:${i}`,
          attempts: 1,
          leaseUntil: now + 2 * 3_600_000,
          createdAt: now - 10_000 + i,
        }),
      );
    }
    const o = await overview();
    expect(o.ingest).toMatchObject({ running: 12, failedLastHour: 2 });
    expect(o.ingest.jobs).toHaveLength(10);
    // queued before Big Buck Bunny: the oldest ten are these
    expect(o.ingest.jobs.map((j) => j.title)).toEqual(Array.from({ length: 10 }, (_, i) => `film ${i}`));
    expect(o.ingest.jobs.find((j) => j.title === 'film 0')).toMatchObject({ stage: null, percent: null });
    t.clock.advance(3_600_000);
    expect((await overview()).ingest).toMatchObject({ waiting: 3, running: 11, failedLastHour: 0, lastFailure: null });
  });
});
