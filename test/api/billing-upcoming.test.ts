import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDuePeriods } from '../../src/domain/billing/period-close.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { expectError } from '../helpers/expect-error.js';
import { registerOrg } from '../helpers/fixtures.js';
import { asAdmin, billedOrg, getJson, type Json, stream, toNextMonth } from '../helpers/billing.js';

// Invoices before they close: the upcoming invoice is the close's own computation, written
// nowhere; the period closer waits the grace window after a month's end; an invoice below the
// card minimum under card autopay is carried forward to the next one, not charged.

const lineSet = (lines: Json[]) => lines.map((l) => [l.kind, l.periodStart, l.quantity, l.amount]).sort();

describe.each(DIALECTS)('invoices before they close on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
  });
  afterAll(() => t.close());

  it('shows the lines and total of the current period, writes nothing, and matches the invoice the close then issues', async () => {
    const org = await billedOrg(t);
    const admin = await asAdmin(t);
    await admin('POST', `/api/v1/admin/organizations/${org.organizationId}/plan`, {
      plan: 'paid',
      terms: { includedStreams: 2, includedGb: 1 },
    });
    await t.request('POST', '/api/v1/billing/subscriptions', {
      key: org.apiKey,
      body: { product: 'videos', interval: 'month' },
    });
    const sessions = [];
    for (let i = 0; i < 4; i++) sessions.push(await stream(t, org.apiKey, org.content));
    await t.ctx.repos.sessions.addBytes(sessions[0] as string, 2_500_000_000);
    const upcoming = await getJson(t, '/api/v1/billing/invoices/upcoming', org.apiKey);
    // 2 streams past the 2 included at 0.01, 1.5 GB past the 1 included at 0.05, the subscription
    expect(upcoming).toMatchObject({
      periodStart: '2026-01-01T00:00:00.000Z',
      periodEnd: '2026-02-01T00:00:00.000Z',
      totalStreams: 4,
      totalBytes: 2_500_000_000,
      amountApusd: 99.1,
      amountUsd: 99.1,
    });
    expect(lineSet(upcoming.lines)).toEqual([
      ['gb', upcoming.periodStart, 1_500_000_000, 0.08],
      ['streams', upcoming.periodStart, 2, 0.02],
      ['subscription', upcoming.periodStart, 1, 99],
    ]);
    expect(upcoming.autopay).toMatchObject({ enabled: false, action: 'none' });
    expect(upcoming.finalizesAt).toBe('2026-02-01T01:00:00.000Z');
    expect((await t.ctx.repos.invoices.list(org.organizationId, { limit: 10, offset: 0 })).total).toBe(0);
    expect(await t.ctx.repos.usage.unsettled(org.organizationId, Number.MAX_SAFE_INTEGER)).toEqual([]);

    toNextMonth(t);
    await closeDuePeriods(t.ctx);
    const [issued] = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices as [Json];
    const detail = await getJson(t, `/api/v1/billing/invoices/${issued.id}`, org.apiKey);
    expect(detail).toMatchObject({
      periodStart: upcoming.periodStart,
      totalStreams: 4,
      totalBytes: 2_500_000_000,
      amountApusd: upcoming.amountApusd,
    });
    expect(lineSet(detail.lines)).toEqual(lineSet(upcoming.lines));
  });

  it('needs an API key with the billing scope: 401 without one, 403 for a key without billing', async () => {
    await expectError(await t.request('GET', '/api/v1/billing/invoices/upcoming'), 401, 'INVALID_API_KEY');
    const streamOnly = await registerOrg(t, { name: 'Stream Only', scopes: ['stream'] });
    await expectError(
      await t.request('GET', '/api/v1/billing/invoices/upcoming', { key: streamOnly.apiKey }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });

  it('issues nothing within the grace window after the month ends, and issues the month once it has passed', async () => {
    const org = await billedOrg(t, { name: 'Late Night' });
    await stream(t, org.apiKey, org.content);
    toNextMonth(t, 30 * 60_000);
    const ended = new Date(t.clock.now() - 30 * 60_000).toISOString();
    await closeDuePeriods(t.ctx);
    expect((await t.ctx.repos.invoices.list(org.organizationId, { limit: 10, offset: 0 })).total).toBe(0);
    // meanwhile the next invoice is the month that ended, still open to what lands in it
    expect(await getJson(t, '/api/v1/billing/invoices/upcoming', org.apiKey)).toMatchObject({
      periodEnd: ended,
      totalStreams: 1,
    });
    t.clock.advance(31 * 60_000);
    await closeDuePeriods(t.ctx);
    const { invoices } = await getJson(t, '/api/v1/billing/invoices', org.apiKey);
    expect(invoices).toEqual([expect.objectContaining({ periodEnd: ended, totalStreams: 1 })]);
  });

  it('carries an invoice below the card minimum forward under card autopay: not charged, on the next invoice once, the ledger untouched', async () => {
    const org = await billedOrg(t, { name: 'Dust Films', pricePerStream: 0.2 });
    await t.ctx.repos.organizations.update(org.organizationId, { autopayEnabled: true, autopayMethod: 'fiat_card' });
    await stream(t, org.apiKey, org.content);
    const first = await getJson(t, '/api/v1/billing/invoices/upcoming', org.apiKey);
    expect(first).toMatchObject({
      amountApusd: 0.2,
      autopay: { enabled: true, method: 'fiat_card', action: 'carry_forward' },
    });
    toNextMonth(t);
    await closeDuePeriods(t.ctx);
    const [dust] = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices as [Json];
    expect(dust).toMatchObject({ amountApusd: 0.2, paymentStatus: 'open' });
    // no charge was tried: none is scheduled and no failure was reported
    expect(await t.ctx.repos.invoices.find(dust.id)).toMatchObject({
      carryForward: true,
      autopayAttempts: 0,
      nextAutopayAt: null,
    });
    const events = () =>
      getJson(t, '/api/v1/webhook/deliveries', org.apiKey).then((b) =>
        (b.deliveries as Json[]).map((d) => d.eventType),
      );
    expect(await events()).not.toContain('invoice.payment_failed');

    for (let i = 0; i < 2; i++) await stream(t, org.apiKey, org.content);
    const next = await getJson(t, '/api/v1/billing/invoices/upcoming', org.apiKey);
    const carried = {
      kind: 'carried_forward',
      periodStart: dust.periodStart,
      amount: 0.2,
      description: `carried forward from ${dust.periodStart.slice(0, 7)} (below the card minimum)`,
    };
    expect(next).toMatchObject({ amountApusd: 0.6, autopay: { action: 'charge_card' } });
    expect(next.lines).toContainEqual(expect.objectContaining(carried));
    toNextMonth(t);
    await closeDuePeriods(t.ctx);
    const { invoices } = await getJson(t, '/api/v1/billing/invoices', org.apiKey);
    const [later, voided] = invoices as [Json, Json];
    expect(later).toMatchObject({ amountApusd: 0.6, paymentStatus: 'open' });
    expect((await getJson(t, `/api/v1/billing/invoices/${later.id}`, org.apiKey)).lines).toContainEqual(
      expect.objectContaining(carried),
    );
    expect(voided).toMatchObject({ id: dust.id, paymentStatus: 'void', carriedInto: later.id });
    // owed once: the open invoices are the later one alone, and no money moved
    expect(await getJson(t, '/api/v1/billing/balance', org.apiKey)).toMatchObject({
      apusdBalance: 0,
      pendingCharges: 0.6,
    });
    expect(await t.ctx.repos.ledger.list(org.organizationId, { limit: 10, offset: 0 })).toEqual([]);
    toNextMonth(t);
    await closeDuePeriods(t.ctx);
    const third = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices[0] as Json;
    expect(third).toMatchObject({ amountApusd: 0, paymentStatus: 'paid' });
  });
});
