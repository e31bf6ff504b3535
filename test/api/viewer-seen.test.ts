import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/crypto/tokens.js';
import type { ViewerRow } from '../../src/db/repos/index.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { registerOrg } from '../helpers/fixtures.js';

// lastSeen is never earlier than firstSeen. Sessions write both from one instant now (see the
// viewers tests in streaming.test.ts); rows written before that may have lastSeen a few
// milliseconds before firstSeen, and the API must not show them so.

type Json = Record<string, unknown>;

describe.each(DIALECTS)('a viewer stored with lastSeen before firstSeen on %s', (dialect) => {
  let t: TestApp;
  let org: Awaited<ReturnType<typeof registerOrg>>;
  let viewer: ViewerRow;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
    org = await registerOrg(t);
    const firstSeen = t.clock.now();
    viewer = {
      id: newId(),
      organizationId: org.organizationId,
      externalViewerId: 'written-before-the-fix',
      binaryId: '1'.repeat(40),
      walletAddress: `0x${'ab'.repeat(20)}`,
      walletIndex: null,
      hasOwnWallet: true,
      email: null,
      totalStreams: 1,
      isBlocked: false,
      blockedReason: null,
      firstSeen,
      lastSeen: firstSeen - 2,
    };
    await t.ctx.repos.viewers.insert(viewer);
  });
  afterAll(() => t.close());

  const seenInOrder = (v: Json) =>
    expect(Date.parse(v.lastSeen as string)).toBeGreaterThanOrEqual(Date.parse(v.firstSeen as string));

  it('shows lastSeen no earlier than firstSeen in the detail and in the list', async () => {
    const detail = await t.request('GET', `/api/v1/viewers/${viewer.id}`, { key: org.apiKey });
    expect(detail.status).toBe(200);
    seenInOrder((await detail.json()) as Json);
    const list = (await (await t.request('GET', '/api/v1/viewers', { key: org.apiKey })).json()) as { viewers: Json[] };
    expect(list.viewers).toHaveLength(1);
    seenInOrder(list.viewers[0] as Json);
  });

  it('reads so from the repository too, whichever way the row is found', async () => {
    const rows = [
      await t.ctx.repos.viewers.find(viewer.id),
      await t.ctx.repos.viewers.findByExternal(org.organizationId, viewer.externalViewerId),
      await t.ctx.repos.viewers.findByBinaryId(viewer.binaryId),
      ...(await t.ctx.repos.viewers.list(org.organizationId, { limit: 10, offset: 0 })),
    ];
    for (const row of rows) expect(row?.lastSeen).toBe(viewer.firstSeen);
  });
});
