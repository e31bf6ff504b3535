import type Stripe from 'stripe';
import type { Context, FundingMethod, FundRequest } from '../../context.js';
import type { InvoiceRow, OrganizationRow } from '../../db/repos/index.js';
import { badRequest, DrmError } from '../../errors.js';
import type { CardProcessor } from '../../payments/processor.js';
import { payInvoice, payOpenInvoices } from './autopay.js';
import { shownAmount } from './format.js';
import { post } from './ledger.js';

const MICRO_PER_CENT = 10_000;
/** The processor's smallest charge in USD: 50 cents. */
const MIN_CENTS = 50;

/** The context's card processor client, or PAYMENT_METHOD_NOT_CONFIGURED. */
export function processorOf(ctx: Context): Promise<CardProcessor> {
  if (!ctx.cardProcessor) throw new DrmError('PAYMENT_METHOD_NOT_CONFIGURED', 'card payments are not configured on this deployment');
  return ctx.cardProcessor();
}

/**
 * Credits a succeeded PaymentIntent to the organization in its metadata, once per intent (the
 * ledger key is the intent's id, whichever way it arrives: the webhook or Shape B's fund call).
 * Returns whether this call credited it.
 */
export async function creditPaymentIntent(ctx: Context, intent: Stripe.PaymentIntent, event?: { id: string; type: string }): Promise<boolean> {
  const organizationId = intent.metadata?.organizationId;
  if (intent.status !== 'succeeded' || !organizationId || intent.currency !== 'usd') return false;
  if (!(await ctx.repos.organizations.find(organizationId))) throw badRequest(`payment intent ${intent.id} names no organization of this deployment`);
  const amountMicro = intent.amount_received * MICRO_PER_CENT;
  if (!(amountMicro > 0)) return false;
  // The event is taken in the credit's transaction: a credit that fails leaves the event to be redelivered.
  const applied = await ctx.db.transaction(async (tx) => {
    if (event && !(await tx.repos.ledger.takeFiatEvent(event.id, event.type, intent.id, tx.clock.now()))) return false;
    const posted = await post(tx, { organizationId, kind: 'card_payment', amountMicro, idempotencyKey: `card:${intent.id}`, reference: intent.id });
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
  if (request.amountMicro % MICRO_PER_CENT !== 0) throw badRequest('a card payment is in whole cents: amount has more than two decimals');
  const amount = request.amountMicro / MICRO_PER_CENT;
  if (amount < MIN_CENTS) throw badRequest('a card payment is at least 0.50');
  return amount;
}

/** The processor refusing a request (an invalid parameter) is the caller's bad input, not our fault. */
function asBadRequest(err: unknown): never {
  const e = err as { type?: string; message?: string };
  if (e.type === 'StripeInvalidRequestError' || e.type === 'StripeCardError') throw badRequest(`the card processor refused it: ${(e.message ?? '').slice(0, 200)}`);
  throw err;
}

/**
 * Card payments. Without a payment-intent id (Shape A): a PaymentIntent for the amount in cents,
 * the organization in its metadata, is created and its client secret returned for the browser to
 * confirm; the money is credited on the processor's `payment_intent.succeeded` event. With one
 * (Shape B): the intent is retrieved and credited when it succeeded for this organization and
 * this amount, once.
 */
/** What a card autopay attempt came to: paid, pending at the processor (no retry, its event settles it), or failed and why. */
export interface CardCharge {
  paid: boolean;
  pending?: boolean;
  reason?: string;
}

/** The organization's customer at the processor, if it is one the platform made for it (metadata.organizationId). */
export async function ownCustomer(ctx: Context, org: OrganizationRow, customerId: string): Promise<Stripe.Customer | undefined> {
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
async function chargeInvoice(ctx: Context, org: OrganizationRow, invoice: InvoiceRow, attempt: number): Promise<CardCharge> {
  try {
    const customer = await ownCustomer(ctx, org, org.fiatCustomerId as string);
    if (!customer) return { paid: false, reason: `customer ${org.fiatCustomerId} is not this organization's` };
    const method = customer.invoice_settings?.default_payment_method;
    if (!method) return { paid: false, reason: `customer ${customer.id} has no default payment method` };
    const amount = Math.max(MIN_CENTS, Math.ceil(invoice.amountMicro / MICRO_PER_CENT));
    const metadata = { organizationId: org.id, invoiceId: invoice.id };
    const intent = await (await processorOf(ctx)).paymentIntents.create(
      { amount, currency: 'usd', customer: customer.id, payment_method: typeof method === 'string' ? method : method.id, off_session: true, confirm: true, metadata },
      { idempotencyKey: attempt === 1 ? `invoice:${invoice.id}` : `invoice:${invoice.id}:${attempt}` },
    );
    // A bank debit clearing, or a payment waiting on the customer: its event pays the invoice; charging again could charge twice.
    if (intent.status === 'processing' || intent.status === 'requires_action') return { paid: false, pending: true, reason: `the card payment is ${intent.status}` };
    if (intent.status !== 'succeeded') return { paid: false, reason: `the card payment is ${intent.status}` };
    await creditPaymentIntent(ctx, intent);
    return { paid: (await ctx.repos.invoices.find(invoice.id))?.paymentStatus === 'paid' };
  } catch (err) {
    const e = err as { type?: string; message?: string };
    if (e.type !== 'StripeCardError') ctx.log.error('card autopay failed', { invoiceId: invoice.id, err: String(err) });
    const why = e.type === 'StripeCardError' ? 'the card was declined' : 'the card processor could not be reached or refused the charge';
    return { paid: false, reason: `${why}: ${e.message ?? ''}`.trim() };
  }
}

export const cardFunding: FundingMethod = {
  chargeInvoice,
  async fund(ctx, org, request) {
    const processor = await processorOf(ctx);
    const amount = cents(request);
    const shape = ctx.config.apiShape;
    if (request.paymentIntentId === undefined) {
      const intent = await processor.paymentIntents
        .create(
          { amount, currency: 'usd', metadata: { organizationId: org.id }, automatic_payment_methods: { enabled: true } },
          { idempotencyKey: `fund:${org.id}:${ctx.clock.now()}:${amount}` },
        )
        .catch(asBadRequest);
      return { method: 'fiat_card', clientSecret: intent.client_secret, amount: shownAmount(request.amountMicro, shape), paymentIntentId: intent.id };
    }
    return settleIntent(ctx, org, processor, request.paymentIntentId, amount);
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
  if (intent.status !== 'succeeded') throw new DrmError('CONFLICT', `payment intent ${id} has not succeeded (${intent.status}): nothing credited`);
  await creditPaymentIntent(ctx, intent);
  const balance = (await ctx.repos.organizations.find(org.id))?.apusdBalanceMicro ?? 0;
  return { success: true, newBalance: shownAmount(balance, ctx.config.apiShape), transactionId: intent.id, method: 'fiat_card' };
}

/**
 * POST /billing/webhooks/fiat: the processor's signed event (raw body, 300-s tolerance). A
 * `payment_intent.succeeded` is credited once per intent and once per event id, whatever the
 * order or the number of deliveries; other events are acknowledged and change nothing.
 */
export async function takeFiatEvent(ctx: Context, rawBody: string, signature: string | undefined): Promise<{ received: true; credited: boolean }> {
  const processor = await processorOf(ctx);
  let event: Stripe.Event;
  try {
    event = processor.webhooks.constructEvent(rawBody, signature ?? '', ctx.config.fiat?.webhookSecret as string, 300);
  } catch (err) {
    throw badRequest(`the event's signature does not verify: ${(err as Error).message.slice(0, 200)}`);
  }
  if (event.type !== 'payment_intent.succeeded') return { received: true, credited: false };
  const intent = event.data.object as Stripe.PaymentIntent;
  if (!intent.metadata?.organizationId || !(await ctx.repos.organizations.find(intent.metadata.organizationId))) {
    throw badRequest(`payment intent ${intent.id} names no organization of this deployment`);
  }
  return { received: true, credited: await creditPaymentIntent(ctx, intent, { id: event.id, type: event.type }) };
}
