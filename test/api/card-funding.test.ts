import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveFiatConfig } from '../../src/payments/config.js';
import { getJson, type Json, toNextMonth } from '../helpers/billing.js';
import { closeDuePeriods } from '../../src/domain/billing/period-close.js';
import { type CardStandIn, SECRET_KEY, startCardStandIn, WEBHOOK_SECRET } from '../helpers/card-processor.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { expectError } from '../helpers/expect-error.js';
import { registerOrg } from '../helpers/fixtures.js';

// Card payments through the official SDK pointed at a local stand-in for the
// processor. A PaymentIntent per fund request; money is credited on the signed succeeded event,
// or on Shape B's retrieval of a succeeded intent, once per intent and once per event.

describe.each(DIALECTS)('card payments on %s', (dialect) => {
  let standIn: CardStandIn;
  let t: TestApp;
  beforeAll(async () => {
    standIn = await startCardStandIn();
    const fiat = resolveFiatConfig(
      {},
      { DRM_FIAT_SECRET_KEY: SECRET_KEY, DRM_FIAT_WEBHOOK_SECRET: WEBHOOK_SECRET, DRM_FIAT_API_BASE: standIn.url },
    );
    t = await makeTestApp(dialect, { config: { fiat } });
  });
  afterAll(async () => {
    await t?.close();
    await standIn?.close();
  });

  const fund = (key: string, body: unknown) => t.request('POST', '/api/v1/billing/fund', { key, body });
  const deliver = (e: { body: string; signature: string }) =>
    t.request('POST', '/api/v1/billing/webhooks/fiat', { body: e.body, headers: { 'stripe-signature': e.signature } });
  const balance = async (key: string) => (await getJson(t, '/api/v1/billing/balance', key)).apusdBalance as number;

  it('creates a PaymentIntent in cents for the organization and credits it once on its succeeded event, however often it comes', async () => {
    const org = await registerOrg(t);
    const res = await fund(org.apiKey, { method: 'fiat_card', amount: 20 });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({
      method: 'fiat_card',
      clientSecret: expect.stringMatching(/^pi_\w+_secret_/),
      amount: 20,
    });
    expect(standIn.intents.get(body.paymentIntentId)).toMatchObject({
      amount: 2000,
      currency: 'usd',
      metadata: { organizationId: org.organizationId },
    });
    // before it succeeded, a processing event credits nothing
    expect((await deliver(standIn.event(body.paymentIntentId, { type: 'payment_intent.processing' }))).status).toBe(
      200,
    );
    standIn.confirm(body.paymentIntentId);
    const succeeded = standIn.event(body.paymentIntentId, { eventId: 'evt_once' });
    expect(await (await deliver(succeeded)).json()).toEqual({ received: true, credited: true });
    expect(await (await deliver(succeeded)).json()).toEqual({ received: true, credited: false });
    expect(await (await deliver(standIn.event(body.paymentIntentId))).json()).toEqual({
      received: true,
      credited: false,
    });
    expect(await balance(org.apiKey)).toBe(20);
    expect((await getJson(t, '/api/v1/billing/balance', org.apiKey)).fiatBalance).toBe(20);
    expect(await t.ctx.repos.ledger.sumOf(org.organizationId)).toBe(20_000_000);
  });

  it("makes one PaymentIntent for 50 concurrent requests with one Idempotency-Key, keyed at the processor by the client's key", async () => {
    const org = await registerOrg(t, { name: 'Double Clicker' });
    const before = standIn.intents.size;
    const headers = { 'idempotency-key': 'checkout-7f3a' };
    const body = { method: 'fiat_card', amount: 12.5 };
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => t.request('POST', '/api/v1/billing/fund', { key: org.apiKey, body, headers })),
    );
    // each is the one answer, or a 409 saying the first is still being answered
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    const retried = await t.request('POST', '/api/v1/billing/fund', { key: org.apiKey, body, headers });
    const shown = (await retried.json()) as Json;
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    for (const r of answers.filter((a) => a.status === 200))
      expect(((await r.json()) as Json).paymentIntentId).toBe(shown.paymentIntentId);
    expect(standIn.intents.size - before).toBe(1);
    expect(standIn.idempotencyKeyOf(shown.paymentIntentId)).toBe(`fund:${org.organizationId}:checkout-7f3a`);
    // without a key, each request is its own payment
    await fund(org.apiKey, body);
    await fund(org.apiKey, body);
    expect(standIn.intents.size - before).toBe(3);
  });

  it('refuses a bad signature, a stale timestamp and an intent of no organization with 400, crediting nothing', async () => {
    const org = await registerOrg(t, { name: 'Careful' });
    const { paymentIntentId } = (await (await fund(org.apiKey, { method: 'fiat_card', amount: 5 })).json()) as Json;
    standIn.confirm(paymentIntentId);
    await expectError(await deliver(standIn.event(paymentIntentId, { secret: 'whsec_wrong0123' })), 400, 'BAD_REQUEST');
    await expectError(await deliver(standIn.event(paymentIntentId, { ageSeconds: 301 })), 400, 'BAD_REQUEST');
    await expectError(await t.request('POST', '/api/v1/billing/webhooks/fiat', { body: '{}' }), 400, 'BAD_REQUEST');
    await expectError(
      await t.request('POST', '/api/v1/billing/webhooks/fiat', {
        body: `{"id":"${'x'.repeat(900_000)}"}`,
        headers: { 'stripe-signature': 't=1,v1=00' },
      }),
      400,
      'BAD_REQUEST',
    );
    const stranger = standIn.intents.get(paymentIntentId) as Json;
    stranger.metadata = { organizationId: '00000000-0000-4000-8000-000000000000' };
    await expectError(await deliver(standIn.event(paymentIntentId)), 400, 'BAD_REQUEST');
    expect(await balance(org.apiKey)).toBe(0);
  });

  it("credits what the processor says of the intent, not the event's copy of it", async () => {
    const org = await registerOrg(t, { name: 'Forged Copy' });
    const { paymentIntentId } = (await (await fund(org.apiKey, { method: 'fiat_card', amount: 5 })).json()) as Json;
    // a validly signed event whose copy says succeeded and 5,000 received; the processor says it was never paid
    const claimed = {
      ...(standIn.intents.get(paymentIntentId) as Json),
      status: 'succeeded',
      amount_received: 500_000,
    };
    expect(await (await deliver(standIn.event(paymentIntentId, { object: claimed }))).json()).toEqual({
      received: true,
      credited: false,
    });
    standIn.confirm(paymentIntentId);
    expect(await (await deliver(standIn.event(paymentIntentId, { object: claimed }))).json()).toEqual({
      received: true,
      credited: true,
    });
    expect(await balance(org.apiKey)).toBe(5);
  });

  it("Shape B's payment-intent id credits a succeeded intent of this organization and amount, once; a declined one credits nothing", async () => {
    const org = await registerOrg(t, { name: 'Shape B' });
    const { paymentIntentId } = (await (await fund(org.apiKey, { method: 'fiat_card', amount: 12.5 })).json()) as Json;
    await expectError(await fund(org.apiKey, { method: 'fiat_card', amount: 12.5, paymentIntentId }), 409, 'CONFLICT');
    standIn.confirm(paymentIntentId, 'pm_card_chargeDeclined');
    await expectError(await fund(org.apiKey, { method: 'fiat_card', amount: 12.5, paymentIntentId }), 409, 'CONFLICT');
    standIn.confirm(paymentIntentId);
    await expectError(await fund(org.apiKey, { method: 'fiat_card', amount: 13, paymentIntentId }), 400, 'BAD_REQUEST');
    const other = await registerOrg(t, { name: 'Not Yours' });
    await expectError(
      await fund(other.apiKey, { method: 'fiat_card', amount: 12.5, paymentIntentId }),
      400,
      'BAD_REQUEST',
    );
    const first = (await (
      await fund(org.apiKey, { method: 'fiat_card', amount: 12.5, paymentIntentId })
    ).json()) as Json;
    expect(first).toMatchObject({ success: true, newBalance: 12.5, transactionId: paymentIntentId });
    const again = (await (
      await fund(org.apiKey, { method: 'fiat_card', amount: 12.5, paymentIntentId })
    ).json()) as Json;
    expect(again.newBalance).toBe(12.5);
    // and the event arriving after it changes nothing
    expect(await (await deliver(standIn.event(paymentIntentId))).json()).toMatchObject({ credited: false });
    expect(await balance(org.apiKey)).toBe(12.5);
    await expectError(
      await fund(org.apiKey, { method: 'fiat_card', amount: 12.5, paymentIntentId: 'pi_unknown' }),
      400,
      'BAD_REQUEST',
    );
    await expectError(await fund(org.apiKey, { method: 'fiat_card', amount: 1.005 }), 400, 'BAD_REQUEST');
    await expectError(await fund(org.apiKey, { method: 'fiat_card', amount: 0.3 }), 400, 'BAD_REQUEST');
    // another organization's customer is refused: its card would pay this one's invoices
    const theirs = await standIn.customer(other.organizationId, 'pm_card_visa');
    await expectError(
      await t.request('POST', '/api/v1/billing/autopay', {
        key: org.apiKey,
        body: { enabled: true, method: 'fiat_card', customerId: theirs },
      }),
      400,
      'BAD_REQUEST',
    );
    await expectError(
      await t.request('POST', '/api/v1/billing/autopay', {
        key: org.apiKey,
        body: { enabled: true, method: 'fiat_card', customerId: 'cus_nobody' },
      }),
      400,
      'BAD_REQUEST',
    );
  });

  it('autopay by card charges an issued invoice off-session once, and marks it paid', async () => {
    const org = await registerOrg(t, { name: 'Card Autopay' });
    const customerId = await standIn.customer(org.organizationId, 'pm_card_visa');
    await t.request('POST', '/api/v1/billing/autopay', {
      key: org.apiKey,
      body: { enabled: true, method: 'fiat_card', customerId },
    });
    await t.request('POST', '/api/v1/billing/subscriptions', {
      key: org.apiKey,
      body: { product: 'videos', interval: 'month' },
    });
    const before = standIn.intents.size;
    toNextMonth(t);
    await closeDuePeriods(t.ctx);
    await closeDuePeriods(t.ctx);
    const [invoice] = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices as [Json];
    expect(invoice).toMatchObject({ amountApusd: 99, paymentStatus: 'paid' });
    const charges = [...standIn.intents.values()]
      .slice(before)
      .filter((i) => i.metadata.organizationId === org.organizationId);
    expect(charges).toEqual([
      expect.objectContaining({
        amount: 9900,
        status: 'succeeded',
        metadata: { organizationId: org.organizationId, invoiceId: invoice.id },
      }),
    ]);
    // the processor's succeeded event, arriving after, changes nothing
    expect(await (await deliver(standIn.event(charges[0]?.id as string))).json()).toMatchObject({ credited: false });
    const kinds = (await t.ctx.repos.ledger.list(org.organizationId, { limit: 10, offset: 0 }))
      .map((e) => [e.kind, e.amountMicro])
      .sort();
    expect(kinds).toEqual([
      ['card_payment', 99_000_000],
      ['invoice_payment', -99_000_000],
    ]);
    const events = ((await getJson(t, '/api/v1/webhook/deliveries', org.apiKey)).deliveries as Json[]).map(
      (d) => d.eventType,
    );
    expect(events).toEqual(expect.arrayContaining(['invoice.issued', 'invoice.paid']));
  });

  it('leaves an invoice open when the card is declined, says so once, and tries again with backoff until it is paid', async () => {
    const org = await registerOrg(t, { name: 'Declined' });
    await t.request('POST', '/api/v1/billing/autopay', {
      key: org.apiKey,
      body: {
        enabled: true,
        method: 'fiat_card',
        customerId: await standIn.customer(org.organizationId, 'pm_card_chargeDeclined'),
      },
    });
    await t.request('POST', '/api/v1/billing/subscriptions', {
      key: org.apiKey,
      body: { product: 'music', interval: 'month' },
    });
    toNextMonth(t);
    await closeDuePeriods(t.ctx);
    const [invoice] = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices as [Json];
    expect(invoice.paymentStatus).toBe('open');
    const row = await t.ctx.repos.invoices.find(invoice.id);
    expect(row).toMatchObject({ autopayAttempts: 1, nextAutopayAt: t.clock.now() + 3_600_000 });
    // not due yet: nothing tried
    await closeDuePeriods(t.ctx);
    expect((await t.ctx.repos.invoices.find(invoice.id))?.autopayAttempts).toBe(1);
    t.clock.advance(3_600_000);
    await closeDuePeriods(t.ctx);
    expect(await t.ctx.repos.invoices.find(invoice.id)).toMatchObject({
      autopayAttempts: 2,
      paymentStatus: 'open',
      nextAutopayAt: t.clock.now() + 21_600_000,
    });
    // the organization puts a working card on file; the next attempt pays
    await t.request('POST', '/api/v1/billing/autopay', {
      key: org.apiKey,
      body: {
        enabled: true,
        method: 'fiat_card',
        customerId: await standIn.customer(org.organizationId, 'pm_card_visa'),
      },
    });
    t.clock.advance(21_600_000);
    await closeDuePeriods(t.ctx);
    expect(await t.ctx.repos.invoices.find(invoice.id)).toMatchObject({
      autopayAttempts: 3,
      paymentStatus: 'paid',
      nextAutopayAt: null,
    });
    const failed = ((await getJson(t, '/api/v1/webhook/deliveries', org.apiKey)).deliveries as Json[]).filter(
      (d) => d.eventType === 'invoice.payment_failed',
    );
    expect(failed).toHaveLength(1);
  });

  it('marks an invoice paid by a card debit that clears later on its succeeded event, without retrying or reporting it failed', async () => {
    const org = await registerOrg(t, { name: 'Bank Debit' });
    await t.request('POST', '/api/v1/billing/autopay', {
      key: org.apiKey,
      body: {
        enabled: true,
        method: 'fiat_card',
        customerId: await standIn.customer(org.organizationId, 'pm_bank_processing'),
      },
    });
    await t.request('POST', '/api/v1/billing/subscriptions', {
      key: org.apiKey,
      body: { product: 'tickets', interval: 'month' },
    });
    toNextMonth(t);
    await closeDuePeriods(t.ctx);
    const [invoice] = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices as [Json];
    expect(await t.ctx.repos.invoices.find(invoice.id)).toMatchObject({
      paymentStatus: 'open',
      autopayAttempts: 1,
      nextAutopayAt: null,
    });
    const debit = [...standIn.intents.values()].find((i) => i.metadata.invoiceId === invoice.id) as Json;
    expect(debit.status).toBe('processing');
    standIn.confirm(debit.id);
    expect(await (await deliver(standIn.event(debit.id))).json()).toMatchObject({ credited: true });
    expect((await t.ctx.repos.invoices.find(invoice.id))?.paymentStatus).toBe('paid');
    const events = ((await getJson(t, '/api/v1/webhook/deliveries', org.apiKey)).deliveries as Json[]).map(
      (d) => d.eventType,
    );
    expect(events).not.toContain('invoice.payment_failed');
    expect(await balance(org.apiKey)).toBe(0);
  });
});
