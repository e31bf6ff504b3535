import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthStart } from '../../src/clock.js';
import { newId } from '../../src/crypto/tokens.js';
import type { ContentRow } from '../../src/db/repos/index.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { expectError } from '../helpers/expect-error.js';
import { addContent, license, registerOrg } from '../helpers/fixtures.js';

// A session is made without a lock or a count of the month's sessions. Streams
// are counted per organization and month in a counter, new viewers take their id and wallet index
// from counters before their transaction; these are the scenarios that must still hold under
// concurrent requests, on both dialects.

describe.each(DIALECTS)('counting sessions and new viewers on %s', (dialect) => {
  let t: TestApp;
  let content: ContentRow;

  beforeAll(async () => {
    t = await makeTestApp(dialect);
    // createSession needs only a packaged stream's row here: nothing is played.
    content = await addContent(t, { storagePath: `content/${randomUUID()}` });
  });
  afterAll(() => t.close());

  async function orgWithLimit(monthlyStreamLimit: number) {
    const org = await registerOrg(t);
    await license(t, org.organizationId, content.id);
    await t.ctx.repos.organizations.update(org.organizationId, { monthlyStreamLimit, rateLimitPerHour: 100_000 });
    return org;
  }
  const start = (apiKey: string, body: unknown) =>
    t.request('POST', `/api/v1/stream/${content.id}`, { key: apiKey, body });

  it('makes exactly the monthly limit of 30 concurrent sessions over it, and refuses the rest', async () => {
    const org = await orgWithLimit(12);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => start(org.apiKey, { viewerId: `crowd-${i}` })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(12);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(18);
    expect(await t.ctx.repos.sessions.countSince(org.organizationId, monthStart(t.clock.now()))).toBe(12);
  });

  it('gives the count back when the session is not made (a blocked viewer uses none of the month)', async () => {
    const org = await orgWithLimit(2);
    const blocked = await (await start(org.apiKey, { viewerId: 'to-block' })).json();
    expect(
      (
        await t.request('POST', `/api/v1/viewers/${blocked.viewerId}/block`, {
          key: org.apiKey,
          body: { reason: 'leaked' },
        })
      ).status,
    ).toBe(200);
    for (let i = 0; i < 3; i++)
      await expectError(await start(org.apiKey, { viewerId: 'to-block' }), 403, 'VIEWER_BLOCKED');
    expect((await start(org.apiKey, { viewerId: 'another' })).status).toBe(201);
    await expectError(await start(org.apiKey, { viewerId: 'a-third' }), 429, 'MONTHLY_STREAM_LIMIT_EXCEEDED');
  });

  it("starts a month's count from the sessions already stored (a deployment upgraded mid-month)", async () => {
    const org = await orgWithLimit(3);
    expect((await start(org.apiKey, { viewerId: 'early' })).status).toBe(201);
    const early = await t.ctx.repos.sessions.countSince(org.organizationId, monthStart(t.clock.now()));
    expect(early).toBe(1);
    // The counter of an older release did not exist: remove it, as if these sessions came before it.
    await t.ctx.repos.counters.add(`streams:${org.organizationId}:${monthStart(t.clock.now())}`, -1);
    expect((await start(org.apiKey, { viewerId: 'second' })).status).toBe(201);
    expect((await start(org.apiKey, { viewerId: 'third' })).status).toBe(201);
    await expectError(await start(org.apiKey, { viewerId: 'fourth' }), 429, 'MONTHLY_STREAM_LIMIT_EXCEEDED');
  });

  it('gives 40 concurrent new viewers 40 distinct ids and wallets, and one viewer to 10 concurrent first sessions of the same person', async () => {
    const org = await orgWithLimit(1000);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => start(org.apiKey, { viewerId: `new-${i}` })),
    );
    const sessions = await Promise.all(answers.map((r) => r.json()));
    expect(new Set(sessions.map((s) => s.binaryId)).size).toBe(40);
    const viewers = await Promise.all(sessions.map((s) => t.ctx.repos.viewers.find(s.viewerId)));
    expect(new Set(viewers.map((v) => v?.walletIndex)).size).toBe(40);
    expect(new Set(viewers.map((v) => v?.walletAddress)).size).toBe(40);
    const same = await Promise.all(Array.from({ length: 10 }, () => start(org.apiKey, { viewerId: 'one-person' })));
    const statuses = same.map((r) => r.status);
    expect(statuses).toEqual(Array(10).fill(201));
    const made = await Promise.all(same.map((r) => r.json()));
    expect(new Set(made.map((s) => s.viewerId)).size).toBe(1);
    expect(made.filter((s) => s.isNewViewer)).toHaveLength(1);
  });

  it("records a session's events as skipped at once for an organization without a webhook URL, and as due for one with a URL", async () => {
    const quiet = await orgWithLimit(10);
    const hooked = await orgWithLimit(10);
    await t.ctx.repos.organizations.update(hooked.organizationId, { webhookUrl: 'https://hooks.example.test/drm' });
    for (const org of [quiet, hooked]) expect((await start(org.apiKey, { viewerId: 'someone' })).status).toBe(201);
    const quietEvents = await t.ctx.repos.webhookDeliveries.listForOrg(quiet.organizationId, 10);
    const hookedEvents = await t.ctx.repos.webhookDeliveries.listForOrg(hooked.organizationId, 10);
    expect(quietEvents.map((d) => d.eventType).sort()).toEqual(['viewer.created', 'viewer.stream']);
    expect(
      quietEvents.every(
        (d) =>
          d.status === 'skipped' && d.lastError === 'no webhookUrl' && d.nextAttemptAt === null && d.attempts === 0,
      ),
    ).toBe(true);
    expect(hookedEvents.map((d) => d.eventType).sort()).toEqual(['viewer.created', 'viewer.stream']);
    expect(hookedEvents.every((d) => d.status === 'pending' && d.nextAttemptAt !== null)).toBe(true);
  });

  it('starts the wallet counter past the wallet indexes viewers already hold', async () => {
    const fresh = await makeTestApp(dialect);
    try {
      const c = await addContent(fresh, { storagePath: 'content/x' });
      const org = await registerOrg(fresh);
      await license(fresh, org.organizationId, c.id);
      const now = fresh.clock.now();
      await fresh.ctx.repos.viewers.insert({
        id: newId(),
        organizationId: org.organizationId,
        externalViewerId: 'from-before',
        binaryId: '01'.repeat(20),
        walletAddress: `0x${'4'.repeat(40)}`,
        walletIndex: 41,
        hasOwnWallet: false,
        email: null,
        totalStreams: 0,
        isBlocked: false,
        blockedReason: null,
        firstSeen: now,
        lastSeen: now,
      });
      const s = await (
        await fresh.request('POST', `/api/v1/stream/${c.id}`, { key: org.apiKey, body: { viewerId: 'after' } })
      ).json();
      expect((await fresh.ctx.repos.viewers.find(s.viewerId))?.walletIndex).toBe(42);
    } finally {
      await fresh.close();
    }
  });
});
