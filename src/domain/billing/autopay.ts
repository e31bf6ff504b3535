import type { Context } from '../../context.js';
import type { InvoiceRow, OrganizationRow } from '../../db/repos/index.js';
import { DrmError, notFound } from '../../errors.js';
import { recordEvent } from '../events.js';
import { invoiceEventData } from './invoice-events.js';
import { post } from './ledger.js';

/**
 * Pays an open invoice from the balance, once: the ledger key is the invoice id, so a second
 * attempt (a retry, another server) moves nothing. INSUFFICIENT_BALANCE when the balance is short.
 */
export async function payInvoice(ctx: Context, invoice: InvoiceRow): Promise<InvoiceRow> {
  const paid = await ctx.db.transaction(async (tx) => {
    const current = await tx.repos.invoices.find(invoice.id);
    if (!current) throw notFound('invoice');
    if (current.paymentStatus !== 'open') return current;
    const org = await tx.repos.organizations.find(current.organizationId);
    const { applied } = await post(tx, {
      organizationId: current.organizationId,
      kind: 'invoice_payment',
      amountMicro: -current.amountMicro,
      idempotencyKey: `invoice:${current.id}`,
      reference: current.id,
    });
    const now = tx.clock.now();
    // Another payment of it got there first (it waited on the balance's lock): that one told the organization.
    if (!applied || !(await tx.repos.invoices.markPaid(current.id, now))) return (await tx.repos.invoices.find(current.id)) as InvoiceRow;
    const done: InvoiceRow = { ...current, paymentStatus: 'paid', paidAt: now };
    await recordEvent(tx, current.organizationId, 'invoice.paid', invoiceEventData(done), { webhookUrl: org?.webhookUrl });
    return done;
  });
  ctx.wakeWebhooks();
  return paid;
}

/** After a card autopay attempt fails: the next attempts wait 1 h, 6 h, 24 h and 72 h, then stop. */
const CARD_RETRY_MS = [3_600_000, 21_600_000, 86_400_000, 259_200_000];

/**
 * Right after an invoice is issued, with autopay on: APUSD pays it from the balance; a card
 * (`fiat_card`, with the organization's customer id) is charged off-session through the
 * deployment's card method (idempotency key: the invoice id). A payment that cannot be made says
 * so once with invoice.payment_failed and leaves the invoice open: APUSD waits for money to arrive
 * (payOpenInvoices), a card is tried again later (retryCardAutopay).
 */
export async function payIssuedInvoice(ctx: Context, invoice: InvoiceRow): Promise<void> {
  const org = await ctx.repos.organizations.find(invoice.organizationId);
  if (!org?.autopayEnabled) return;
  let reason: string;
  if (org.autopayMethod === 'apusd') {
    try {
      await payInvoice(ctx, invoice);
      return;
    } catch (err) {
      if (!(err instanceof DrmError && err.code === 'INSUFFICIENT_BALANCE')) throw err;
      reason = err.message;
    }
  } else {
    const charged = await chargeByCard(ctx, org, invoice, 1);
    if (charged.paid || charged.pending) return;
    reason = charged.reason ?? 'the card payment did not go through';
  }
  await ctx.db.transaction((tx) =>
    recordEvent(tx, invoice.organizationId, 'invoice.payment_failed', { ...invoiceEventData(invoice), reason }, { webhookUrl: org.webhookUrl }),
  );
  ctx.wakeWebhooks();
}

async function chargeByCard(ctx: Context, org: OrganizationRow, invoice: InvoiceRow, attempt: number): Promise<{ paid: boolean; pending?: boolean; reason?: string }> {
  const card = ctx.funding.fiat_card;
  let result: { paid: boolean; pending?: boolean; reason?: string };
  if (!card?.chargeInvoice) result = { paid: false, reason: 'card payments are not configured on this deployment' };
  else if (!org.fiatCustomerId) result = { paid: false, reason: 'autopay by card needs the customer id (customerId in the autopay request)' };
  else result = await card.chargeInvoice(ctx, org, invoice, attempt);
  const retry = result.paid || result.pending || !card?.chargeInvoice ? undefined : CARD_RETRY_MS[attempt - 1];
  await ctx.repos.invoices.scheduleAutopay(invoice.id, attempt, retry === undefined ? null : ctx.clock.now() + retry);
  return result;
}

/** Card autopay attempts that are due (a pass of the period closer): each invoice charged again, once per attempt. */
export async function retryCardAutopay(ctx: Context, limit = 100): Promise<number> {
  let paid = 0;
  for (const invoice of await ctx.repos.invoices.dueCardRetries(ctx.clock.now(), limit)) {
    const org = await ctx.repos.organizations.find(invoice.organizationId);
    if (!org?.autopayEnabled || org.autopayMethod !== 'fiat_card') {
      await ctx.repos.invoices.scheduleAutopay(invoice.id, invoice.autopayAttempts, null);
      continue;
    }
    try {
      if ((await chargeByCard(ctx, org, invoice, invoice.autopayAttempts + 1)).paid) paid++;
    } catch (err) {
      // one invoice's trouble (the database) holds up no other's attempt; it comes round again
      ctx.log.error('card autopay attempt failed', { invoiceId: invoice.id, err: String(err) });
    }
  }
  return paid;
}

/**
 * After money arrives: with APUSD autopay on, pays the open invoices oldest first while the
 * balance covers them; the first it cannot cover waits for the next deposit. Returns how many it paid.
 */
export async function payOpenInvoices(ctx: Context, organizationId: string): Promise<number> {
  const org = await ctx.repos.organizations.find(organizationId);
  if (!org?.autopayEnabled || org.autopayMethod !== 'apusd') return 0;
  let paid = 0;
  for (const invoice of await ctx.repos.invoices.open(organizationId)) {
    try {
      await payInvoice(ctx, invoice);
      paid++;
    } catch (err) {
      if (err instanceof DrmError && err.code === 'INSUFFICIENT_BALANCE') break;
      throw err;
    }
  }
  return paid;
}
