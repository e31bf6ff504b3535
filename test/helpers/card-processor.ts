import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

// A local stand-in for the card processor's HTTP API, for the official SDK to talk to (the one
// paid outside service the tests replace): PaymentIntents (create with an idempotency map,
// retrieve, confirm with a test card that succeeds or is declined, a 402 card error for a declined
// off-session charge), customers with a default payment method, and signed webhook events
// made with the SDK's own generateTestHeaderString.

export const SECRET_KEY = 'sk_test_standin0123456789';
export const WEBHOOK_SECRET = 'whsec_standin0123456789';

type Intent = Record<string, unknown> & {
  id: string;
  amount: number;
  status: string;
  metadata: Record<string, string>;
};

export interface CardStandIn {
  url: string;
  intents: Map<string, Intent>;
  /** the Idempotency-Key the intent was created with */
  idempotencyKeyOf(intentId: string): string | undefined;
  /** the platform's customer for an organization, whose default payment method succeeds (pm_card_visa) or is declined */
  customer(organizationId: string, paymentMethod: string): Promise<string>;
  /** confirms an intent as a browser would: pm_card_visa succeeds, pm_card_chargeDeclined fails */
  confirm(id: string, paymentMethod?: string): Intent;
  /** refunds part or all of a succeeded intent's charge (cumulative, as the processor keeps it); returns the charge id */
  refund(intentId: string, cents: number): string;
  /** opens a dispute of the intent's charge, or closes it won or lost; returns the dispute id */
  dispute(intentId: string, status: 'needs_response' | 'won' | 'lost'): string;
  /** a signed event of a charge or dispute as it is now */
  objectEvent(type: string, objectId: string): { body: string; signature: string };
  /** an event of the intent as it is now (or carrying `object` instead), signed (or with another secret, or dated `ageSeconds` ago) */
  event(
    id: string,
    options?: {
      type?: string;
      eventId?: string;
      secret?: string;
      ageSeconds?: number;
      object?: Record<string, unknown>;
    },
  ): { body: string; signature: string };
  close(): Promise<void>;
}

const sdk = new Stripe(SECRET_KEY);

export async function startCardStandIn(): Promise<CardStandIn> {
  const intents = new Map<string, Intent>();
  const idempotent = new Map<string, Intent>();
  const customers = new Map<string, unknown>();
  // charges and disputes by id, and the charge and dispute of each intent
  const objects = new Map<string, Record<string, unknown>>();
  const chargeOf = (intent: Intent) => {
    const chargeId = `ch_${intent.id.slice(3)}`;
    if (!objects.has(chargeId))
      objects.set(chargeId, {
        id: chargeId,
        object: 'charge',
        payment_intent: intent.id,
        amount: intent.amount,
        amount_refunded: 0,
        currency: 'usd',
        metadata: {},
      });
    return objects.get(chargeId) as Record<string, unknown> & { id: string; amount_refunded: number };
  };
  const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
  const confirm = (intentId: string, paymentMethod = 'pm_card_visa'): Intent => {
    const intent = intents.get(intentId) as Intent;
    // pm_card_visa succeeds, pm_bank_processing clears later (confirm it again with pm_card_visa), anything else is declined
    if (paymentMethod === 'pm_bank_processing') Object.assign(intent, { status: 'processing' });
    else if (paymentMethod === 'pm_card_visa')
      Object.assign(intent, { status: 'succeeded', amount_received: intent.amount, last_payment_error: null });
    else Object.assign(intent, { status: 'requires_payment_method', last_payment_error: { code: 'card_declined' } });
    return intent;
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.headers.authorization !== `Bearer ${SECRET_KEY}`)
        return send(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
      const form = new URLSearchParams(raw);
      const path = (req.url ?? '').split('?')[0] as string;
      if (req.method === 'POST' && path === '/v1/payment_intents') {
        const key = req.headers['idempotency-key'] as string | undefined;
        if (key && idempotent.has(key)) return send(200, idempotent.get(key));
        const intentId = id('pi');
        const metadata = Object.fromEntries(
          [...form.entries()].filter(([k]) => k.startsWith('metadata[')).map(([k, v]) => [k.slice(9, -1), v]),
        );
        const intent: Intent = {
          id: intentId,
          object: 'payment_intent',
          amount: Number(form.get('amount')),
          amount_received: 0,
          currency: form.get('currency'),
          status: 'requires_payment_method',
          client_secret: `${intentId}_secret_${randomBytes(8).toString('hex')}`,
          metadata,
          customer: form.get('customer'),
        };
        intents.set(intentId, intent);
        if (key) idempotent.set(key, intent);
        if (
          form.get('confirm') === 'true' &&
          confirm(intentId, form.get('payment_method') ?? undefined).status === 'requires_payment_method'
        ) {
          // as the processor answers a declined confirmation: 402 with a card error
          return send(402, {
            error: {
              type: 'card_error',
              code: 'card_declined',
              message: 'Your card was declined.',
              payment_intent: intent,
            },
          });
        }
        return send(200, intent);
      }
      if (req.method === 'POST' && path === '/v1/customers') {
        const metadata = Object.fromEntries(
          [...form.entries()].filter(([k]) => k.startsWith('metadata[')).map(([k, v]) => [k.slice(9, -1), v]),
        );
        const customer = {
          id: id('cus'),
          object: 'customer',
          metadata,
          invoice_settings: { default_payment_method: form.get('invoice_settings[default_payment_method]') },
        };
        customers.set(customer.id, customer);
        return send(200, customer);
      }
      const c = /^\/v1\/customers\/(\w+)$/.exec(path);
      if (req.method === 'GET' && c) {
        const customer = customers.get(c[1] as string);
        return customer
          ? send(200, customer)
          : send(404, {
              error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such customer' },
            });
      }
      const o = /^\/v1\/(charges|disputes)\/(\w+)$/.exec(path);
      if (req.method === 'GET' && o) {
        const found = objects.get(o[2] as string);
        return found
          ? send(200, found)
          : send(404, {
              error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${o[1]}` },
            });
      }
      const m = /^\/v1\/payment_intents\/([\w]+)(\/confirm)?$/.exec(path);
      const intent = m ? intents.get(m[1] as string) : undefined;
      if (!m || !intent)
        return send(404, {
          error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such payment_intent' },
        });
      if (req.method === 'GET' && !m[2]) return send(200, intent);
      if (req.method === 'POST' && m[2]) return send(200, confirm(intent.id, form.get('payment_method') ?? undefined));
      return send(404, { error: { type: 'invalid_request_error', message: 'Unrecognized request URL' } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    intents,
    idempotencyKeyOf: (intentId) => [...idempotent.entries()].find(([, i]) => i.id === intentId)?.[0],
    confirm,
    refund(intentId, cents) {
      const charge = chargeOf(intents.get(intentId) as Intent);
      charge.amount_refunded += cents;
      return charge.id;
    },
    dispute(intentId, status) {
      const intent = intents.get(intentId) as Intent;
      const disputeId = `dp_${intent.id.slice(3)}`;
      const charge = chargeOf(intent);
      objects.set(disputeId, {
        id: disputeId,
        object: 'dispute',
        payment_intent: intent.id,
        charge: charge.id,
        amount: intent.amount,
        currency: 'usd',
        status,
      });
      return disputeId;
    },
    objectEvent(type, objectId) {
      const body = JSON.stringify({ id: id('evt'), object: 'event', type, data: { object: objects.get(objectId) } });
      return { body, signature: sdk.webhooks.generateTestHeaderString({ payload: body, secret: WEBHOOK_SECRET }) };
    },
    event(intentId, options = {}) {
      const body = JSON.stringify({
        id: options.eventId ?? id('evt'),
        object: 'event',
        type: options.type ?? 'payment_intent.succeeded',
        data: { object: options.object ?? intents.get(intentId) },
      });
      const timestamp = Math.floor(Date.now() / 1000) - (options.ageSeconds ?? 0);
      return {
        body,
        signature: sdk.webhooks.generateTestHeaderString({
          payload: body,
          secret: options.secret ?? WEBHOOK_SECRET,
          timestamp,
        }),
      };
    },
    async customer(organizationId, paymentMethod) {
      const client = new Stripe(SECRET_KEY, { host: '127.0.0.1', port, protocol: 'http' });
      return (
        await client.customers.create({
          metadata: { organizationId },
          invoice_settings: { default_payment_method: paymentMethod },
        })
      ).id;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}
