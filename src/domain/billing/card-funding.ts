import type Stripe from 'stripe';
import type { Context, FundRequest, InvoiceCharge, PaymentMethod } from '../../context.js';
import { newId } from '../../crypto/tokens.js';
import type { InvoiceRow, OrganizationRow } from '../../db/repos/index.js';
import { badRequest, DrmError } from '../../errors.js';
import type { CardProcessor } from '../../payments/processor.js';
import { payInvoice, payOpenInvoices } from './autopay.js';
import { MICRO_PER_CENT, shownAmount } from './format.js';
import { takeDispute, takeRefund } from './card-reversals.js';
import { post } from './ledger.js';

/** The processor's smallest charge in USD: 50 cents. */
export const MIN_CENTS = 50;
/** After a card autopay attempt fails: the next attempts wait 1 h, 6 h, 24 h and 72 h, then stop. */
const RETRY_MS = [3_600_000, 21_600_000, 86_400_000, 259_200_000];

/** The context's card processor client, or PAYMENT_METHOD_NOT_CONFIGURED. */
export function processorOf(ctx: Context): Promise<CardProcessor> {
  if (!ctx.cardProcessor)
    throw new DrmError('PAYMENT_METHOD_NOT_CONFIGURED', 'card payments are not configured on this deployment');
  return ctx.cardProcessor();
}

/**
 * Credits a succeeded PaymentIntent to the organization in its metadata, once per intent (the
 * ledger key is the intent's id, whichever way it arrives: the webhook or Shape B's fund call).
 * Returns whether this call credited it.
 */
export async function creditPaymentIntent(
  ctx: Context,
  intent: Stripe.PaymentIntent,
  event?: { id: string; type: string },
): Promise<boolean> {
  const organizationId = intent.metadata?.organizationId;
  if (intent.status !== 'succeeded' || !organizationId || intent.currency !== 'usd') return false;
  if (!(await ctx.repos.organizations.find(organizationId)))
    throw badRequest(`payment intent ${intent.id} names no organization of this deployment`);
  const amountMicro = intent.amount_received * MICRO_PER_CENT;
  if (!(amountMicro > 0)) return false;
  // The event is taken in the credit's transaction: a credit that fails leaves the event to be redelivered.
  const applied = await ctx.db.transaction(async (tx) => {
    if (event && !(await tx.repos.ledger.takeFiatEvent(event.id, event.type, intent.id, tx.clock.now()))) return false;
    const posted = await post(tx, {
      organizationId,
      kind: 'card_payment',
      amountMicro,
      idempotencyKey: `card:${intent.id}`,
      reference: intent.id,
    });
    return posted.applied;
  });
  // A card autopay's payment pays its invoice from the money it brought; other payments pay what autopay would.
  const invoiceId = intent.metadata?.invoiceId;
  const invoice = invoiceId ? await ctx.repos.invoices.find(invoiceId) : undefined;
  if (invoice?.organizationId === organizationId && invoice.paymentStatus === 'open') {
    await payInvoice(ctx, invoice).catch((err) => {
      if (!(err instanceof DrmError && err.code === 'INSUFFICIENT_BALANCE')) throw err;
    });
  } else if (applied) await payOpenInvoices(ctx, organizationId);
  return applied;
}

function cents(request: FundRequest): number {
  if (request.amountMicro % MICRO_PER_CENT !== 0)
    throw badRequest('a card payment is in whole cents: amount has more than two decimals');
  const amount = request.amountMicro / MICRO_PER_CENT;
  if (amount < MIN_CENTS) throw badRequest('a card payment is at least 0.50');
  return amount;
}

/** The processor refusing a request (an invalid parameter) is the caller's bad input, not our fault. */
function asBadRequest(err: unknown): never {
  const e = err as { type?: string; message?: string };
  if (e.type === 'StripeInvalidRequestError' || e.type === 'StripeCardError')
    throw badRequest(`the card processor refused it: ${(e.message ?? '').slice(0, 200)}`);
  throw err;
}

/** The organization's customer at the processor, if it is one the platform made for it (metadata.organizationId). */
export async function ownCustomer(
  ctx: Context,
  org: OrganizationRow,
  customerId: string,
): Promise<Stripe.Customer | undefined> {
  const processor = await processorOf(ctx);
  const customer = await processor.customers.retrieve(customerId).catch((err: { statusCode?: number }) => {
    if (err.statusCode === 404) return undefined;
    throw err;
  });
  if (!customer || customer.deleted || customer.metadata?.organizationId !== org.id) return undefined;
  return customer;
}

/**
 * An invoice charged off-session to the default payment method of the organization's own customer,
 * in whole cents rounded up. Any failure is an answer, not an error: the caller records it and
 * schedules the next attempt.
 */
async function chargeInvoice(
  ctx: Context,
  org: OrganizationRow,
  invoice: InvoiceRow,
  attempt: number,
): Promise<InvoiceCharge> {
  const charge = await chargeOnce(ctx, org, invoice, attempt);
  return charge.paid || charge.pending ? charge : { ...charge, retryInMs: RETRY_MS[attempt - 1] };
}

async function chargeOnce(
  ctx: Context,
  org: OrganizationRow,
  invoice: InvoiceRow,
  attempt: number,
): Promise<InvoiceCharge> {
  // Not configured here (a command run without the processor's keys): a later attempt, by a server that has them, may
  // be.
  if (!ctx.cardProcessor) return { paid: false, reason: 'card payments are not configured on this deployment' };
  if (!org.fiatCustomerId)
    return { paid: false, reason: 'autopay by card needs the customer id (customerId in the autopay request)' };
  try {
    const customer = await ownCustomer(ctx, org, org.fiatCustomerId as string);
    if (!customer) return { paid: false, reason: `customer ${org.fiatCustomerId} is not this organization's` };
    const method = customer.invoice_settings?.default_payment_method;
    if (!method) return { paid: false, reason: `customer ${customer.id} has no default payment method` };
    const amount = Math.max(MIN_CENTS, Math.ceil(invoice.amountMicro / MICRO_PER_CENT));
    const metadata = { organizationId: org.id, invoiceId: invoice.id };
    const intent = await (await processorOf(ctx)).paymentIntents.create(
      {
        amount,
        currency: 'usd',
        customer: customer.id,
        payment_method: typeof method === 'string' ? method : method.id,
        off_session: true,
        confirm: true,
        metadata,
      },
      { idempotencyKey: attempt === 1 ? `invoice:${invoice.id}` : `invoice:${invoice.id}:${attempt}` },
    );
    // A bank debit clearing, or a payment waiting on the customer: its event pays the invoice; charging again could
    // charge twice.
    if (intent.status === 'processing' || intent.status === 'requires_action')
      return { paid: false, pending: true, reason: `the card payment is ${intent.status}` };
    if (intent.status !== 'succeeded') return { paid: false, reason: `the card payment is ${intent.status}` };
    await creditPaymentIntent(ctx, intent);
    return { paid: (await ctx.repos.invoices.find(invoice.id))?.paymentStatus === 'paid' };
  } catch (err) {
    const e = err as { type?: string; message?: string };
    if (e.type !== 'StripeCardError') ctx.log.error('card autopay failed', { invoiceId: invoice.id, err: String(err) });
    const why =
      e.type === 'StripeCardError'
        ? 'the card was declined'
        : 'the card processor could not be reached or refused the charge';
    return { paid: false, reason: `${why}: ${e.message ?? ''}`.trim() };
  }
}

/**
 * Card payments. Without a payment-intent id (Shape A): a PaymentIntent for the amount in cents,
 * the organization in its metadata, is created and its client secret returned for the browser to
 * confirm; the money is credited on the processor's `payment_intent.succeeded` event. With one
 * (Shape B): the intent is retrieved and credited when it succeeded for this organization and
 * this amount, once.
 */
export const cardMethod: PaymentMethod = {
  name: 'fiat_card',
  unavailable: (config) => (config.fiat ? undefined : 'card payments are not configured on this deployment'),
  chargeInvoice,
  takeEvent: (ctx, rawBody, signature) => takeFiatEvent(ctx, rawBody, signature),
  async fund(ctx, org, request) {
    const processor = await processorOf(ctx);
    const amount = cents(request);
    if (request.paymentIntentId !== undefined)
      return settleIntent(ctx, org, processor, request.paymentIntentId, amount);
    // The client's retry of one request is one intent at the processor; without a key each request is its own.
    const key = `fund:${org.id}:${request.idempotencyKey ?? newId()}`;
    const intent = await processor.paymentIntents
      .create(
        { amount, currency: 'usd', metadata: { organizationId: org.id }, automatic_payment_methods: { enabled: true } },
        { idempotencyKey: key },
      )
      .catch(asBadRequest);
    const shown = shownAmount(request.amountMicro, ctx.config.apiShape);
    return { method: 'fiat_card', clientSecret: intent.client_secret, amount: shown, paymentIntentId: intent.id };
  },
};

async function settleIntent(ctx: Context, org: OrganizationRow, processor: CardProcessor, id: string, amount: number) {
  if (!/^pi_\w{1,200}$/.test(id)) throw badRequest('paymentIntentId must be a payment intent id (pi_…)');
  const intent = await processor.paymentIntents.retrieve(id).catch((err: { statusCode?: number }) => {
    if (err.statusCode === 404) throw badRequest(`payment intent ${id} is unknown to the card processor`);
    return asBadRequest(err);
  });
  if (intent.metadata?.organizationId !== org.id) throw badRequest(`payment intent ${id} is not this organization's`);
  if (intent.amount !== amount) throw badRequest(`payment intent ${id} is for ${intent.amount} cents, not ${amount}`);
  if (intent.status !== 'succeeded')
    throw new DrmError('CONFLICT', `payment intent ${id} has not succeeded (${intent.status}): nothing credited`);
  await creditPaymentIntent(ctx, intent);
  const balance = (await ctx.repos.organizations.find(org.id))?.apusdBalanceMicro ?? 0;
  return {
    success: true,
    newBalance: shownAmount(balance, ctx.config.apiShape),
    transactionId: intent.id,
    method: 'fiat_card',
  };
}

/**
 * POST /billing/webhooks/fiat: the processor's signed event (raw body, 300-s tolerance). Each is
 * confirmed by fetching its object from the processor, not taken from the event's copy: a
 * `payment_intent.succeeded` is credited once per intent and once per event id; refunds and
 * disputes take money back (./card-reversals.ts). Other events are acknowledged and change nothing.
 */
export async function takeFiatEvent(
  ctx: Context,
  rawBody: string,
  signature: string | undefined,
): Promise<FiatEventAnswer> {
  const processor = await processorOf(ctx);
  let event: Stripe.Event;
  try {
    event = processor.webhooks.constructEvent(rawBody, signature ?? '', ctx.config.fiat?.webhookSecret as string, 300);
  } catch (err) {
    throw badRequest(`the event's signature does not verify: ${(err as Error).message.slice(0, 200)}`);
  }
  const objectId = (event.data.object as { id?: string }).id ?? '';
  const taken = { id: event.id, type: event.type };
  if (event.type === 'charge.refunded')
    return { received: true, reversed: await takeRefund(ctx, processor, objectId, taken) };
  if (event.type === 'charge.dispute.created' || event.type === 'charge.dispute.closed') {
    return { received: true, reversed: await takeDispute(ctx, processor, objectId, taken) };
  }
  if (event.type !== 'payment_intent.succeeded') return { received: true, credited: false };
  const intent = await processor.paymentIntents.retrieve(objectId).catch((err: { statusCode?: number }) => {
    if (err.statusCode === 404) throw badRequest(`payment intent ${objectId} is unknown to the card processor`);
    throw err;
  });
  if (!intent.metadata?.organizationId || !(await ctx.repos.organizations.find(intent.metadata.organizationId))) {
    throw badRequest(`payment intent ${intent.id} names no organization of this deployment`);
  }
  return { received: true, credited: await creditPaymentIntent(ctx, intent, taken) };
}

export type FiatEventAnswer = { received: true; credited: boolean } | { received: true; reversed: boolean };
