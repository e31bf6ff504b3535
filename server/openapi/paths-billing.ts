import { PAYMENT_METHODS } from '../../src/payments/methods.js';
import { INTERVALS, PRODUCTS } from '../../src/domain/billing/subscriptions-rule.js';
import {
  arrayOf,
  bool,
  idempotencyKeyParam,
  moneyConflict,
  type Endpoint,
  errorResponse,
  int,
  jsonBody,
  jsonResponse,
  keyed,
  notFound,
  num,
  object,
  open,
  pagingParams,
  pathParam,
  ref,
  str,
  uuid,
} from './build.js';

// Spec 4.7 (scope billing) and what docs/billing.md adds: invoice detail and payment,
// subscriptions per product, and the card processor's signed events.

const BILLING = 'Billing';
/**
 * Said of the keyed endpoints that a suspended organization may still call (test/helpers/openapi-endpoints.ts reads
 * it).
 */
export const SUSPENDED_MAY = 'Open to a suspended organization: it may still see what it owes and pay it.';
const invoiceId = pathParam('id', 'the invoice', uuid());
const method = { type: 'string', enum: [...PAYMENT_METHODS] };

const autopay = (verb: 'put' | 'post', shape: string): Endpoint => ({
  method: verb,
  path: '/api/v1/billing/autopay',
  operation: keyed('billing', BILLING, {
    operationId: verb === 'put' ? 'setAutopay' : 'setAutopayShapeB',
    summary: `Turn autopay on or off (${shape})`,
    description: 'Turning APUSD autopay on pays the open invoices the balance covers, at once.',
    requestBody: jsonBody(
      object(
        {
          enabled: bool(),
          method: { ...method, description: 'defaults to apusd when enabling' },
          customerId: str("Shape B: the card processor's customer made for this organization", {
            minLength: 1,
            maxLength: 255,
          }),
        },
        ['method', 'customerId'],
      ),
      { enabled: true, method: 'apusd' },
    ),
    responses: { '200': jsonResponse('the setting', ref('AutopayResult')) },
  }),
});

const reads: Endpoint[] = [
  {
    method: 'get',
    path: '/api/v1/billing/usage',
    operation: keyed('billing', BILLING, {
      operationId: 'getUsage',
      summary: 'Usage of the current period',
      description: SUSPENDED_MAY,
      responses: { '200': jsonResponse('usage so far', ref('Usage')) },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/billing/balance',
    operation: keyed('billing', BILLING, {
      operationId: 'getBalance',
      summary: 'The balance',
      description: SUSPENDED_MAY,
      responses: { '200': jsonResponse('the balance', ref('Balance')) },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/billing/invoices',
    operation: keyed('billing', BILLING, {
      operationId: 'listInvoices',
      summary: 'Invoices, newest first',
      description: SUSPENDED_MAY,
      parameters: pagingParams(100),
      responses: {
        '200': jsonResponse(
          'a page of invoices',
          object({ invoices: arrayOf(ref('Invoice')), total: int(), page: int(), limit: int() }),
        ),
      },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/billing/invoices/upcoming',
    operation: keyed('billing', BILLING, {
      operationId: 'getUpcomingInvoice',
      summary: 'The next invoice as it stands now',
      description:
        `The invoice the period closer will issue next, computed as the close computes ` +
        `it (subscriptions, usage at the organization's terms, late usage of earlier ` +
        `periods, amounts carried forward) and stored nowhere: the current month's, or ` +
        `between a month's end and its close (the grace window) that month's. With what ` +
        `autopay will do with it. ${SUSPENDED_MAY}`,
      responses: { '200': jsonResponse('the upcoming invoice', ref('UpcomingInvoice')) },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/billing/invoices/{id}',
    operation: keyed('billing', BILLING, {
      operationId: 'getInvoice',
      summary: 'One invoice with its lines',
      description: SUSPENDED_MAY,
      parameters: [invoiceId],
      responses: { '200': jsonResponse('the invoice', ref('InvoiceDetail')), '404': notFound },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/billing/invoices/{id}/pay',
    operation: keyed('billing', BILLING, {
      operationId: 'payInvoice',
      summary: 'Pay an open invoice from the balance',
      description: SUSPENDED_MAY,
      parameters: [invoiceId, idempotencyKeyParam],
      responses: {
        '200': jsonResponse('the invoice, paid', ref('Invoice')),
        '402': errorResponse('InsufficientBalance'),
        '404': notFound,
        '409': moneyConflict,
      },
    }),
  },
];

const changes: Endpoint[] = [
  {
    method: 'post',
    path: '/api/v1/billing/fund',
    operation: keyed('billing', BILLING, {
      operationId: 'fund',
      summary: 'Fund the balance by APUSD transfer or card payment',
      description:
        `${SUSPENDED_MAY} 422 when the method is not configured on this deployment. A ` +
        `card payment intent's own idempotency key at the processor derives from the Idempotency-Key.`,
      parameters: [idempotencyKeyParam],
      requestBody: jsonBody(
        object(
          {
            method,
            amount: num('APUSD, at most two decimals', { exclusiveMinimum: 0, maximum: 1_000_000 }),
            paymentIntentId: str('card: a succeeded payment intent (pi_…) to settle', {
              minLength: 1,
              maxLength: 255,
            }),
          },
          ['paymentIntentId'],
        ),
        { method: 'apusd', amount: 250 },
      ),
      responses: {
        '200': jsonResponse('how to pay, or what was credited', ref('FundResult')),
        '409': moneyConflict,
        '422': errorResponse('PaymentMethodNotConfigured'),
      },
    }),
  },
  autopay('put', 'Shape A'),
  autopay('post', 'Shape B'),
  {
    method: 'get',
    path: '/api/v1/billing/subscriptions',
    operation: keyed('billing', BILLING, {
      operationId: 'listSubscriptions',
      summary: 'Subscriptions live now or ending later',
      description: SUSPENDED_MAY,
      responses: { '200': jsonResponse('the subscriptions', object({ subscriptions: arrayOf(ref('Subscription')) })) },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/billing/subscriptions',
    operation: keyed('billing', BILLING, {
      operationId: 'subscribe',
      summary: 'Subscribe to a product, monthly or yearly',
      description:
        'A product already subscribed is 409 CONFLICT: cancel it first to change the ' +
        'interval. A White-Label contract runs by the year only. A balance below zero ' +
        'for longer than the grace (--negative-grace) is 402.',
      parameters: [idempotencyKeyParam],
      requestBody: jsonBody(
        object({
          product: { type: 'string', enum: [...PRODUCTS] },
          interval: { type: 'string', enum: [...INTERVALS] },
        }),
        { product: 'videos', interval: 'month' },
      ),
      responses: {
        '201': jsonResponse('the subscription', ref('Subscription')),
        '402': errorResponse('InsufficientBalance'),
        '409': moneyConflict,
      },
    }),
  },
  {
    method: 'delete',
    path: '/api/v1/billing/subscriptions/{id}',
    operation: keyed('billing', BILLING, {
      operationId: 'cancelSubscription',
      summary: 'Cancel a subscription (it runs to the end of its term)',
      description: SUSPENDED_MAY,
      parameters: [pathParam('id', 'the subscription', uuid())],
      responses: { '200': jsonResponse('the subscription, cancelled', ref('Subscription')), '404': notFound },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/billing/webhooks/fiat',
    operation: open(BILLING, {
      operationId: 'cardProcessorEvent',
      summary: "The card processor's signed events",
      description:
        'Called by the card processor, not by organizations: the Stripe-Signature ' +
        'header over the raw body (300 s tolerance) is the authentication. Each ' +
        "event's object is fetched from the processor before anything moves. A " +
        'payment_intent.succeeded is credited once (credited); charge.refunded, ' +
        'charge.dispute.created and charge.dispute.closed take money back or give it ' +
        'back (reversed); other events are acknowledged.',
      parameters: [
        {
          name: 'Stripe-Signature',
          in: 'header',
          required: true,
          description: "the processor's signature",
          schema: { type: 'string' },
        },
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { type: 'object', description: "the processor's event" } } },
      },
      responses: {
        '200': jsonResponse(
          'received',
          object({ received: { type: 'boolean', const: true }, credited: bool(), reversed: bool() }, [
            'credited',
            'reversed',
          ]),
        ),
        '422': errorResponse('PaymentMethodNotConfigured'),
      },
    }),
  },
];

export const BILLING_ENDPOINTS: Endpoint[] = [...reads, ...changes];
