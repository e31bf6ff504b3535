import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../src/clock.js';
import { post } from '../../src/domain/billing/ledger.js';
import { resolveFiatConfig } from '../../src/payments/config.js';
import { billedOrg, getJson, type Json, stream } from '../helpers/billing.js';
import { type CardStandIn, SECRET_KEY, startCardStandIn, WEBHOOK_SECRET } from '../helpers/card-processor.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { expectError } from '../helpers/expect-error.js';

// Money that goes back out through the card processor: refunds and disputes are fetched from the
// processor and become reversal entries with their webhooks; a balance they take below zero says
// balance.negative, and after the grace new sessions are refused with 402 until it is paid back.

describe.each(DIALECTS)('card refunds and disputes on %s', (dialect) => {
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

  const deliver = async (e: { body: string; signature: string }) =>
    (
      await t.request('POST', '/api/v1/billing/webhooks/fiat', {
        body: e.body,
        headers: { 'stripe-signature': e.signature },
      })
    ).json();
  const balance = async (key: string) => (await getJson(t, '/api/v1/billing/balance', key)).apusdBalance as number;
  const eventsOf = async (organizationId: string, type: string) =>
    (await t.ctx.repos.webhookDeliveries.listForOrg(organizationId, 50))
      .filter((d) => d.eventType === type)
      .map((d) => JSON.parse(d.body).data as Json);
  /** A card payment of `usd`, credited on its succeeded event; returns the intent id. */
  const payByCard = async (apiKey: string, usd: number): Promise<string> => {
    const res = await t.request('POST', '/api/v1/billing/fund', {
      key: apiKey,
      body: { method: 'fiat_card', amount: usd },
    });
    const { paymentIntentId } = (await res.json()) as Json;
    standIn.confirm(paymentIntentId);
    expect(await deliver(standIn.event(paymentIntentId))).toMatchObject({ credited: true });
    return paymentIntentId;
  };

  /** Money spent from the balance, as an invoice paid from it is. */
  const spend = (organizationId: string, usd: number, memo: string) =>
    t.ctx.db.transaction((tx) =>
      post(tx, {
        organizationId,
        kind: 'invoice_payment',
        amountMicro: -usd * 1_000_000,
        idempotencyKey: `spent:${memo}`,
      }),
    );

  it('takes a refund back from the balance once, however often its event comes, and says payment.refunded', async () => {
    const org = await billedOrg(t, { name: 'Refunded' });
    const intent = await payByCard(org.apiKey, 30);
    const charge = standIn.refund(intent, 1000);
    const refunded = standIn.objectEvent('charge.refunded', charge);
    expect(await deliver(refunded)).toEqual({ received: true, reversed: true });
    expect(await deliver(refunded)).toEqual({ received: true, reversed: false });
    expect(await balance(org.apiKey)).toBe(20);
    // the rest refunded later: the event carries the total, the ledger takes the difference
    standIn.refund(intent, 2000);
    expect(await deliver(standIn.objectEvent('charge.refunded', charge))).toMatchObject({ reversed: true });
    expect(await balance(org.apiKey)).toBe(0);
    const entries = (await t.ctx.repos.ledger.list(org.organizationId, { limit: 10, offset: 0 })).map((e) => [
      e.kind,
      e.amountMicro,
    ]);
    expect(entries.sort()).toEqual([
      ['card_payment', 30_000_000],
      ['card_refund', -10_000_000],
      ['card_refund', -20_000_000],
    ]);
    const refunds = (await eventsOf(org.organizationId, 'payment.refunded')).sort(
      (a, b) => a.totalRefundedMicroApusd - b.totalRefundedMicroApusd,
    );
    expect(refunds).toEqual([
      expect.objectContaining({
        paymentIntentId: intent,
        refundedMicroApusd: 10_000_000,
        totalRefundedMicroApusd: 10_000_000,
      }),
      expect.objectContaining({
        refundedMicroApusd: 20_000_000,
        totalRefundedMicroApusd: 30_000_000,
        balanceMicroApusd: 0,
      }),
    ]);
    expect(await t.ctx.repos.ledger.sumOf(org.organizationId)).toBe(0);
  });

  it('holds a disputed payment back, below zero once it was spent, and gives it back when the dispute is won', async () => {
    const org = await billedOrg(t, { name: 'Disputed' });
    const intent = await payByCard(org.apiKey, 10);
    await spend(org.organizationId, 8, intent);
    const dispute = standIn.dispute(intent, 'needs_response');
    expect(await deliver(standIn.objectEvent('charge.dispute.created', dispute))).toMatchObject({ reversed: true });
    expect(await deliver(standIn.objectEvent('charge.dispute.created', dispute))).toMatchObject({ reversed: false });
    expect(await balance(org.apiKey)).toBe(-8);
    expect(await eventsOf(org.organizationId, 'payment.disputed')).toEqual([
      expect.objectContaining({ status: 'opened', amountMicroApusd: 10_000_000 }),
    ]);
    standIn.dispute(intent, 'won');
    expect(await deliver(standIn.objectEvent('charge.dispute.closed', dispute))).toMatchObject({ reversed: true });
    expect(await balance(org.apiKey)).toBe(2);
    expect((await t.ctx.repos.organizations.find(org.organizationId))?.negativeSince).toBeNull();
    expect((await eventsOf(org.organizationId, 'payment.disputed')).map((e) => e.status).sort()).toEqual([
      'opened',
      'won',
    ]);
    expect(await t.ctx.repos.ledger.sumOf(org.organizationId)).toBe(2_000_000);
  });

  it('keeps a lost dispute taken: balance.negative once, new sessions 402 after 72 h, open again once paid back', async () => {
    const org = await billedOrg(t, { name: 'Lost It' });
    const intent = await payByCard(org.apiKey, 10);
    await payByCard(org.apiKey, 5);
    await spend(org.organizationId, 12, intent);
    const dispute = standIn.dispute(intent, 'needs_response');
    await deliver(standIn.objectEvent('charge.dispute.created', dispute));
    standIn.dispute(intent, 'lost');
    expect(await deliver(standIn.objectEvent('charge.dispute.closed', dispute))).toMatchObject({ reversed: true });
    expect(await balance(org.apiKey)).toBe(-7);
    expect((await eventsOf(org.organizationId, 'payment.disputed')).map((e) => e.status).sort()).toEqual([
      'lost',
      'opened',
    ]);
    expect(await eventsOf(org.organizationId, 'balance.negative')).toEqual([
      expect.objectContaining({ balanceMicroApusd: -7_000_000, cause: 'card_dispute' }),
    ]);
    expect(await stream(t, org.apiKey, org.content)).toBeTruthy();
    t.clock.advance(72 * HOUR_MS);
    await expectError(
      await t.request('POST', `/api/v1/stream/${org.content.id}`, { key: org.apiKey, body: { viewerId: 'v-late' } }),
      402,
      'INSUFFICIENT_BALANCE',
    );
    await payByCard(org.apiKey, 7);
    expect((await t.ctx.repos.organizations.find(org.organizationId))?.negativeSince).toBeNull();
    expect(await stream(t, org.apiKey, org.content)).toBeTruthy();
  });
});
