import type { EventType } from '../../src/domain/events.js';
import { BACKOFF_MS } from '../../src/domain/webhooks/deliver.js';
import { int, type Operation, object, type Schema, str, time, uuid } from './build.js';
import { SCHEMA_PARTS } from './schemas-core.js';

// Spec section 6 as OpenAPI 3.1 `webhooks`: what the server POSTs to an organization's webhookUrl
// (src/domain/events.ts writes the envelope, src/domain/webhooks/deliver.ts sends it).

const invoice = {
  invoiceId: uuid(),
  periodStart: time(),
  periodEnd: time(),
  amountMicroApusd: int('millionths of APUSD'),
  paymentStatus: str(),
};

/** Each event's `data`: a Record over EventType, so that a new event fails the typecheck until described. */
const EVENTS: Record<EventType, { summary: string; data: Record<string, Schema> }> = {
  'viewer.created': {
    summary: 'A viewer was seen for the first time: wallet and permanent binaryId assigned',
    data: { viewerId: uuid(), walletAddress: SCHEMA_PARTS.wallet, binaryId: SCHEMA_PARTS.binaryId },
  },
  'viewer.stream': {
    summary: 'A viewer started a stream session',
    data: { viewerId: uuid(), contentId: uuid(), sessionId: uuid() },
  },
  'viewer.blocked': {
    summary: 'A viewer was blocked',
    data: { viewerId: uuid(), reason: str('empty when none was given') },
  },
  'organization.suspended': {
    summary: 'The platform admin suspended the organization',
    data: { organizationId: uuid(), reason: str() },
  },
  'webhook.test': {
    summary: 'A test send (POST /api/v1/webhook/test)',
    data: { message: str(), organizationId: uuid() },
  },
  'invoice.issued': { summary: 'An invoice was issued at the end of a billing period', data: invoice },
  'invoice.paid': { summary: 'An invoice was paid', data: invoice },
  'invoice.payment_failed': { summary: 'Autopay could not pay an invoice', data: { ...invoice, reason: str() } },
  'balance.negative': {
    summary:
      'The balance went below zero (money taken back after it was spent); new ' +
      'sessions are refused after the grace period',
    data: {
      balanceMicroApusd: int('millionths of APUSD, below 0'),
      since: time(),
      sessionsRefusedFrom: time(),
      cause: str('the ledger entry kind'),
    },
  },
  'payment.refunded': {
    summary: 'A card payment was refunded at the processor; the refund is taken from the balance',
    data: {
      paymentIntentId: str(),
      refundedMicroApusd: int('this refund'),
      totalRefundedMicroApusd: int('all refunds of the payment so far'),
      balanceMicroApusd: int(),
    },
  },
  'payment.disputed': {
    summary: "A card payment's dispute opened (its amount taken from the balance), was won (given back) or lost",
    data: {
      paymentIntentId: str(),
      disputeId: str(),
      status: str('opened, won or lost'),
      amountMicroApusd: int(),
      balanceMicroApusd: int(),
    },
  },
};

const wait = (ms: number) =>
  ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`;

const header = (name: string, description: string) => ({
  name,
  in: 'header' as const,
  required: true,
  description,
  schema: { type: 'string' },
});

function event(type: EventType): Operation {
  const { summary, data } = EVENTS[type];
  return {
    operationId: `event_${type.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase())}`,
    summary,
    tags: ['Webhooks'],
    description:
      `Retried with backoff (${BACKOFF_MS.map(wait).join(', ')}) until the receiver ` +
      `answers 2xx; attempts and responseCode show in GET /api/v1/webhook/deliveries.`,
    parameters: [
      header(
        'X-Service-Signature',
        'lowercase hex HMAC-SHA256 of the raw body, keyed with the webhook secret; compare in constant time',
      ),
      header('X-Service-Event', `the event type: ${type}`),
      header('X-Service-Delivery', 'the delivery id (the envelope id)'),
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: object({
            id: uuid(),
            type: { type: 'string', const: type },
            createdAt: time(),
            organizationId: uuid(),
            data: object(data),
          }),
        },
      },
    },
    responses: { '2XX': { description: 'received; any other answer (or none) is retried' } },
  };
}

export const WEBHOOKS: Record<string, { post: Operation }> = Object.fromEntries(
  (Object.keys(EVENTS) as EventType[]).map((type) => [type, { post: event(type) }]),
);
