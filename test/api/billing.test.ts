import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PeriodCloser } from '../../src/domain/billing/period-close.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { expectError } from '../helpers/expect-error.js';
import { asAdmin, billedOrg, getJson, type Json, stream, toNextMonth } from '../helpers/billing.js';

// Spec section 4.7: metering, the period's invoice, late usage, autopay, subscriptions.
// Terms are set so that the figures are small: 2 streams and 1 GB included at the plan's price.

describe.each(DIALECTS)('billing on %s', (dialect) => {
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof asAdmin>>;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
    admin = await asAdmin(t);
  });
  afterAll(() => t.close());

  const smallTerms = async (organizationId: string) => {
    const res = await admin('POST', `/api/v1/admin/organizations/${organizationId}/plan`, {
      plan: 'paid',
      terms: { includedStreams: 2, includedGb: 1 },
    });
    expect(res.status, await res.clone().text()).toBe(200);
  };

  it('meters one stream per session and bytes as served, priced by license else plan, and shows it as usage and balance', async () => {
    const org = await billedOrg(t);
    const premium = await billedOrg(t, { pricePerStream: 0.5 });
    await smallTerms(org.organizationId);
    const sessions = [];
    for (let i = 0; i < 5; i++) sessions.push(await stream(t, org.apiKey, org.content));
    // a playlist fetch is not a stream
    await t.request('GET', `/api/v1/stream/${org.content.id}/playlist?session=${sessions[0]}`);
    await t.ctx.repos.sessions.addBytes(sessions[0] as string, 2_500_000_000);
    const usage = await getJson(t, '/api/v1/billing/usage', org.apiKey);
    // 3 streams past the 2 included at 0.01, 1.5 GB past the 1 included at 0.05
    expect(usage).toMatchObject({
      totalStreams: 5,
      totalBytes: 2_500_000_000,
      amountDue: 0.11,
      balance: 0,
      pendingCharges: 0.11,
      periodStart: '2026-01-01T00:00:00.000Z',
      periodEnd: '2026-02-01T00:00:00.000Z',
    });
    await stream(t, premium.apiKey, premium.content);
    expect(await getJson(t, '/api/v1/billing/usage', premium.apiKey)).toMatchObject({
      totalStreams: 1,
      amountDue: 0.5,
    });
    expect(await getJson(t, '/api/v1/billing/balance', org.apiKey)).toEqual({
      apusdBalance: 0,
      fiatBalance: 0,
      pendingCharges: 0.11,
      availableBalance: -0.11,
    });
  });

  it('issues one invoice per organization at the end of the month, with its lines; closing again issues nothing', async () => {
    const org = await billedOrg(t);
    await smallTerms(org.organizationId);
    for (let i = 0; i < 4; i++) await stream(t, org.apiKey, org.content);
    const sub = await t.request('POST', '/api/v1/billing/subscriptions', {
      key: org.apiKey,
      body: { product: 'videos', interval: 'month' },
    });
    expect(sub.status).toBe(201);
    await expectError(
      await admin('POST', '/api/v1/admin/billing/close-period', { period: '2026-01' }),
      400,
      'BAD_REQUEST',
    );
    toNextMonth(t);
    const closed = (await (await admin('POST', '/api/v1/admin/billing/close-period', {})).json()) as Json;
    expect(closed).toMatchObject({ success: true, period: '2026-01' });
    expect(closed.issued).toBeGreaterThanOrEqual(1);
    const again = (await (await admin('POST', '/api/v1/admin/billing/close-period', {})).json()) as Json;
    expect(again.issued).toBe(0);

    const { invoices, total } = await getJson(t, '/api/v1/billing/invoices', org.apiKey);
    expect(total).toBe(1);
    expect(invoices[0]).toMatchObject({
      periodStart: '2026-01-01T00:00:00.000Z',
      periodEnd: '2026-02-01T00:00:00.000Z',
      totalStreams: 4,
      amountApusd: 99.02,
      amountUsd: 99.02,
      paymentStatus: 'open',
      paidAt: null,
    });
    const detail = await getJson(t, `/api/v1/billing/invoices/${invoices[0].id}`, org.apiKey);
    expect(detail.lines.map((l: Json) => [l.kind, l.quantity, l.amount])).toEqual([
      ['streams', 2, 0.02],
      ['subscription', 1, 99],
    ]);
    const usage = await getJson(t, '/api/v1/billing/usage', org.apiKey);
    expect(usage).toMatchObject({
      totalStreams: 0,
      periodStart: '2026-02-01T00:00:00.000Z',
      amountDue: 99,
      pendingCharges: 198.02,
    });
  });

  it('puts usage that lands after its period was invoiced on the next invoice as a late line, once', async () => {
    const org = await billedOrg(t);
    await smallTerms(org.organizationId);
    // half an hour before the month ends: the session plays on into the next one
    toNextMonth(t, -30 * 60_000);
    const session = await stream(t, org.apiKey, org.content);
    await t.ctx.repos.sessions.addBytes(session, 1_000_000_000);
    toNextMonth(t);
    await admin('POST', '/api/v1/admin/billing/close-period', {});
    // the session still plays into the new month: 2 GB more of it, charged at the old period's terms
    await t.ctx.repos.sessions.addBytes(session, 2_000_000_000);
    toNextMonth(t);
    await admin('POST', '/api/v1/admin/billing/close-period', {});
    const { invoices } = await getJson(t, '/api/v1/billing/invoices', org.apiKey);
    const [later, first] = invoices as [Json, Json];
    expect(first).toMatchObject({ totalBytes: 1_000_000_000, amountApusd: 0, paymentStatus: 'paid' });
    expect(later).toMatchObject({ totalBytes: 2_000_000_000, amountApusd: 0.1, paymentStatus: 'open' });
    const lines = (await getJson(t, `/api/v1/billing/invoices/${later.id}`, org.apiKey)).lines as Json[];
    expect(lines).toEqual([
      expect.objectContaining({ kind: 'late_usage', amount: 0.1, periodStart: first.periodStart }),
    ]);
    toNextMonth(t);
    await admin('POST', '/api/v1/admin/billing/close-period', {});
    const third = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices[0] as Json;
    expect(third).toMatchObject({ totalBytes: 0, amountApusd: 0 });
  });

  it('autopay pays an issued invoice from the balance once; short of funds it stays open, says so, and is paid when funds arrive', async () => {
    const org = await billedOrg(t);
    await t.request('POST', '/api/v1/billing/subscriptions', {
      key: org.apiKey,
      body: { product: 'music', interval: 'month' },
    });
    const put = await t.request('PUT', '/api/v1/billing/autopay', {
      key: org.apiKey,
      body: { enabled: true, method: 'apusd' },
    });
    expect(await put.json()).toEqual({ success: true, autopayEnabled: true, method: 'apusd' });
    toNextMonth(t);
    await admin('POST', '/api/v1/admin/billing/close-period', {});
    const open = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices[0] as Json;
    expect(open).toMatchObject({ amountApusd: 99, paymentStatus: 'open' });
    const credit = await admin('POST', `/api/v1/admin/organizations/${org.organizationId}/credit`, {
      amount: 150.5,
      idempotencyKey: 'wire-2026-0001',
      reason: 'wire transfer',
    });
    expect(credit.status).toBe(200);
    await admin('POST', `/api/v1/admin/organizations/${org.organizationId}/credit`, {
      amount: 150.5,
      idempotencyKey: 'wire-2026-0001',
    });
    const paid = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices[0] as Json;
    expect(paid).toMatchObject({ id: open.id, paymentStatus: 'paid', paidAt: expect.any(String) });
    expect(await getJson(t, '/api/v1/billing/balance', org.apiKey)).toMatchObject({ apusdBalance: 51.5 });
    const events = ((await getJson(t, '/api/v1/webhook/deliveries', org.apiKey)).deliveries as Json[]).map(
      (d) => d.eventType,
    );
    expect(events).toEqual(expect.arrayContaining(['invoice.issued', 'invoice.payment_failed', 'invoice.paid']));
    const statement = (await (
      await admin('GET', `/api/v1/admin/organizations/${org.organizationId}/billing`)
    ).json()) as Json;
    expect(statement.ledgerMatchesBalance).toBe(true);
    expect(statement.ledger.map((e: Json) => [e.kind, e.amount]).sort()).toEqual([
      ['credit', 150.5],
      ['invoice_payment', -99],
    ]);
  });

  it('an admin credit key used again for another amount is 409 IDEMPOTENCY_KEY_REUSED and credits nothing; a key under 8 characters says so', async () => {
    const org = await billedOrg(t);
    const credit = (body: Json) => admin('POST', `/api/v1/admin/organizations/${org.organizationId}/credit`, body);
    expect((await credit({ amount: 10, idempotencyKey: 'wire-2026-0042' })).status).toBe(200);
    const again = await credit({ amount: 10, idempotencyKey: 'wire-2026-0042' });
    expect(await again.json()).toMatchObject({ applied: false });
    const reused = await credit({ amount: 1000, idempotencyKey: 'wire-2026-0042' });
    expect(reused.status).toBe(409);
    expect(await reused.json()).toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      error: 'idempotencyKey wire-2026-0042 credited 10.00 APUSD before, not 1,000.00 APUSD',
    });
    expect(await getJson(t, '/api/v1/billing/balance', org.apiKey)).toMatchObject({ apusdBalance: 10 });
    const short = await credit({ amount: 1, idempotencyKey: 'abc' });
    expect(short.status).toBe(400);
    expect((await short.json()).error).toBe('idempotencyKey must be at least 8 characters');
  });

  it("the server's period closer issues what is due once the month has ended, and two ticks at once do it once", async () => {
    const org = await billedOrg(t);
    await stream(t, org.apiKey, org.content);
    const closer = new PeriodCloser(t.ctx, 3_600_000);
    await closer.tick();
    expect((await getJson(t, '/api/v1/billing/invoices', org.apiKey)).total).toBe(0);
    toNextMonth(t);
    const ticks = [closer.tick(), closer.tick()];
    expect(ticks[0]).toBe(ticks[1]);
    await Promise.all(ticks);
    await closer.stop();
    expect((await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices).toEqual([
      expect.objectContaining({ totalStreams: 1 }),
    ]);
  });

  it('pays an invoice once when two payments race, and says invoice.paid once', async () => {
    const org = await billedOrg(t);
    await t.request('POST', '/api/v1/billing/subscriptions', {
      key: org.apiKey,
      body: { product: 'cards', interval: 'month' },
    });
    await admin('POST', `/api/v1/admin/organizations/${org.organizationId}/credit`, { amount: 500 });
    toNextMonth(t);
    await admin('POST', '/api/v1/admin/billing/close-period', {});
    const [invoice] = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices as [Json];
    const pay = () => t.request('POST', `/api/v1/billing/invoices/${invoice.id}/pay`, { key: org.apiKey });
    const answers = await Promise.all([pay(), pay(), pay()]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await getJson(t, '/api/v1/billing/balance', org.apiKey)).toMatchObject({ apusdBalance: 401 });
    const paid = ((await getJson(t, '/api/v1/webhook/deliveries', org.apiKey)).deliveries as Json[]).filter(
      (d) => d.eventType === 'invoice.paid',
    );
    expect(paid).toHaveLength(1);
  });

  it('subscribes each product separately, monthly at 99 or yearly at 1,009.80, and cancels at the end of the month or year', async () => {
    const org = await billedOrg(t);
    const sub = (body: Json) => t.request('POST', '/api/v1/billing/subscriptions', { key: org.apiKey, body });
    const monthly = (await (await sub({ product: 'flipbooks', interval: 'month' })).json()) as Json;
    const yearly = (await (await sub({ product: 'cards', interval: 'year' })).json()) as Json;
    expect([monthly.price, yearly.price]).toEqual([99, 1009.8]);
    await expectError(await sub({ product: 'cards', interval: 'month' }), 409, 'CONFLICT');
    const start = new Date(t.clock.now());
    const cancel = (id: string) => t.request('DELETE', `/api/v1/billing/subscriptions/${id}`, { key: org.apiKey });
    expect(((await (await cancel(monthly.id)).json()) as Json).endsAt).toBe(
      new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1)).toISOString(),
    );
    expect(((await (await cancel(yearly.id)).json()) as Json).endsAt).toBe(
      new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 12, 1)).toISOString(),
    );
    await expectError(await cancel('00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
    // cancelled and still running: a new one for the product takes over where it ends
    const next = (await (await sub({ product: 'flipbooks', interval: 'year' })).json()) as Json;
    expect(next).toMatchObject({
      interval: 'year',
      price: 1009.8,
      startedAt: new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1)).toISOString(),
    });
    await expectError(await sub({ product: 'flipbooks', interval: 'month' }), 409, 'CONFLICT');
    expect((await getJson(t, '/api/v1/billing/subscriptions', org.apiKey)).subscriptions).toHaveLength(3);
  });

  it('lets a suspended organization see its balance and invoices but not subscribe', async () => {
    const org = await billedOrg(t);
    await t.request('POST', '/api/v1/billing/subscriptions', {
      key: org.apiKey,
      body: { product: 'music', interval: 'month' },
    });
    await admin('POST', `/api/v1/admin/organizations/${org.organizationId}/suspend`, { reason: 'unpaid' });
    expect((await t.request('GET', '/api/v1/billing/balance', { key: org.apiKey })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/billing/invoices', { key: org.apiKey })).status).toBe(200);
    await expectError(
      await t.request('POST', '/api/v1/billing/subscriptions', {
        key: org.apiKey,
        body: { product: 'videos', interval: 'month' },
      }),
      403,
      'ORGANIZATION_SUSPENDED',
    );
    // what it subscribed before, it may still cancel
    const [sub] = (await getJson(t, '/api/v1/billing/subscriptions', org.apiKey)).subscriptions as [Json];
    expect((await t.request('DELETE', `/api/v1/billing/subscriptions/${sub.id}`, { key: org.apiKey })).status).toBe(
      200,
    );
  });

  it('validates a fund request and says the method is not configured yet, writing nothing', async () => {
    const org = await billedOrg(t);
    const fund = (body: unknown) => t.request('POST', '/api/v1/billing/fund', { key: org.apiKey, body });
    for (const bad of [
      { method: 'apusd', amount: '100' },
      { method: 'apusd', amount: 'NaN' },
      { method: 'apusd', amount: 1e308 },
      { method: 'apusd', amount: -5 },
      { method: 'apusd', amount: 0 },
      { method: 'apusd', amount: 1_000_000.01 },
      { method: 'paypal', amount: 10 },
      { amount: 10 },
      { method: 'apusd', amount: 0.0000001 },
      [],
      'x',
    ]) {
      await expectError(await fund(bad), 400, 'BAD_REQUEST');
    }
    await expectError(await fund({ method: 'apusd', amount: 1_000_000 }), 422, 'PAYMENT_METHOD_NOT_CONFIGURED');
    await expectError(await fund({ method: 'fiat_card', amount: 25.5 }), 422, 'PAYMENT_METHOD_NOT_CONFIGURED');
    await expectError(
      await t.request('POST', '/api/v1/billing/webhooks/fiat', {
        body: '{}',
        headers: { 'stripe-signature': 't=1,v1=00' },
      }),
      422,
      'PAYMENT_METHOD_NOT_CONFIGURED',
    );
    expect(await t.ctx.repos.ledger.list(org.organizationId, { limit: 10, offset: 0 })).toEqual([]);
  });
});

describe('billing in Shape A', () => {
  it('shows whole APUSD, rounded half up, and no amountUsd', async () => {
    const t = await makeTestApp('sqlite', { config: { apiShape: 'a' } });
    try {
      const admin = await asAdmin(t);
      const org = await billedOrg(t, { pricePerStream: 0.5 });
      await stream(t, org.apiKey, org.content);
      expect(await getJson(t, '/api/v1/billing/usage', org.apiKey)).toMatchObject({ amountDue: 1 });
      await admin('POST', `/api/v1/admin/organizations/${org.organizationId}/credit`, { amount: 2.49 });
      expect(await getJson(t, '/api/v1/billing/balance', org.apiKey)).toMatchObject({
        apusdBalance: 2,
        pendingCharges: 1,
      });
      toNextMonth(t);
      await admin('POST', '/api/v1/admin/billing/close-period', {});
      const [invoice] = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices as Json[];
      expect(invoice).toMatchObject({ amountApusd: 1, paymentStatus: 'open' });
      expect(invoice).not.toHaveProperty('amountUsd');
    } finally {
      await t.close();
    }
  });
});
