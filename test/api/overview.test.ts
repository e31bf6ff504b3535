import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseRow } from '../../src/db/repos/index.js';
import type { Overview } from '../../src/domain/operations/overview.js';
import { asAdmin, billedOrg, stream } from '../helpers/billing.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';

// Issue 20, point 1: what drm top shows, read from the database (every server's traffic buckets,
// sessions, the forensics queue, webhooks, cases, the billing period) at GET /api/v1/admin/overview.

const caseRow = (t: TestApp, contentId: string, fields: Partial<CaseRow>): CaseRow => ({
  ...{ id: randomUUID(), organizationId: null, apiKeyId: null, contentId, contentType: 'video', status: 'processing', failureReason: null },
  ...{ uploadPath: null, uploadName: null, uploadBytes: null, attempts: 0, leaseUntil: null, classification: null, binaryId: null },
  ...{ supportedBits: null, matchedViewerId: null, matchedSessionId: null, report: null, progress: null, leakFrames: null, createdAt: t.clock.now(), completedAt: null },
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
    await t.ctx.repos.traffic.add([{ bucketStart, instanceId: 'other-server', requests: 10, clientErrors: 0, serverErrors: 1, segmentBytes: 1_000_000, sessionsStarted: 0 }]);

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
    const running = caseRow(t, org.content.id, { leaseUntil: now + 60_000, attempts: 1, progress: JSON.stringify({ stage: 'detect', done: 3, total: 12 }) });
    const waiting = caseRow(t, org.content.id, { createdAt: now + 1 });
    const decided = caseRow(t, org.content.id, { status: 'completed', classification: 'strong_match', binaryId: '1'.repeat(40), completedAt: now });
    for (const row of [running, waiting, decided]) await t.ctx.repos.forensicCases.insert(row);

    const o = await overview();
    expect(o.sessions.active).toBe(2);
    expect(o.forensics).toMatchObject({ waiting: 1, running: 1 });
    expect(o.forensics.queue).toEqual([
      expect.objectContaining({ caseId: running.id, state: 'running', stage: 'detect', percent: 25 }),
      expect.objectContaining({ caseId: waiting.id, state: 'waiting', stage: null, percent: null }),
    ]);
    expect(o.recentCases.map((c) => c.caseId)).toEqual(expect.arrayContaining([running.id, waiting.id, decided.id]));
    expect(o.recentCases.find((c) => c.caseId === decided.id)).toMatchObject({ classification: 'strong_match', binaryId: '1'.repeat(40) });
    expect(o.billing).toMatchObject({ streams: 2, organizations: 1, openInvoices: 0, openInvoicesApusd: '0.00' });
    expect(o.webhooks).toMatchObject({ backlog: 0, failed: 0 });
  });

  it('lets a running case whose lease ran out count as waiting, and the minute of traffic pass', async () => {
    t.clock.advance(2 * 60_000);
    const o = await overview();
    expect(o.forensics).toMatchObject({ waiting: 2, running: 0 });
    expect(o.traffic).toMatchObject({ requestsPerMinute: 0, servers: 0, segmentBytesPerSecond: 0 });
    expect(o.sessions.active).toBe(2);
  });

  it('counts the whole queue, not only the cases it lists, and lists running cases first', async () => {
    const now = t.clock.now();
    for (let i = 0; i < 22; i++) await t.ctx.repos.forensicCases.insert(caseRow(t, org.content.id, { createdAt: now + i }));
    const running = caseRow(t, org.content.id, { createdAt: now + 100, leaseUntil: now + 60_000, attempts: 1 });
    await t.ctx.repos.forensicCases.insert(running);
    const o = await overview();
    expect(o.forensics).toMatchObject({ waiting: 24, running: 1 });
    expect(o.forensics.queue).toHaveLength(20);
    expect(o.forensics.queue[0]).toMatchObject({ caseId: running.id, state: 'running' });
  });
});
