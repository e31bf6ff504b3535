import type { Context, InvoiceCharge } from '../../context.js';
import type { InvoiceRow, OrganizationRow } from '../../db/repos/index.js';
import { DrmError, notFound } from '../../errors.js';
import { recordEvent } from '../events.js';
import { invoiceEventData } from './invoice-events.js';
import { post } from './ledger.js';
import type { PaymentMethodName } from '../../payments/methods.js';

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
    if (!applied || !(await tx.repos.invoices.markPaid(current.id, now)))
      return (await tx.repos.invoices.find(current.id)) as InvoiceRow;
    const done: InvoiceRow = { ...current, paymentStatus: 'paid', paidAt: now };
    await recordEvent(tx, current.organizationId, 'invoice.paid', invoiceEventData(done), {
      webhookUrl: org?.webhookUrl,
    });
    return done;
  });
  return paid;
}

/**
 * Right after an invoice is issued, with autopay on: the organization's payment method charges it
 * (APUSD from the balance, a card off-session through the processor). A payment that cannot be
 * made says so once with invoice.payment_failed and leaves the invoice open: APUSD waits for money
 * to arrive (payOpenInvoices), a card is tried again on its schedule (retryDueAutopay).
 */
export async function payIssuedInvoice(ctx: Context, invoice: InvoiceRow): Promise<void> {
  const org = await ctx.repos.organizations.find(invoice.organizationId);
  if (!org?.autopayEnabled) return;
  const charged = await chargeByMethod(ctx, org, invoice, 1);
  if (charged.paid || charged.pending) return;
  const reason = charged.reason ?? 'the payment did not go through';
  await ctx.db.transaction((tx) =>
    recordEvent(
      tx,
      invoice.organizationId,
      'invoice.payment_failed',
      { ...invoiceEventData(invoice), reason },
      { webhookUrl: org.webhookUrl },
    ),
  );
}

/** One autopay attempt by the organization's method, and when the next one is due (the method says). */
async function chargeByMethod(
  ctx: Context,
  org: OrganizationRow,
  invoice: InvoiceRow,
  attempt: number,
): Promise<InvoiceCharge> {
  const method = ctx.payments[(org.autopayMethod ?? 'apusd') as PaymentMethodName];
  if (!method) return { paid: false, reason: `autopay method ${org.autopayMethod} is not one of drm's` };
  const result = await method.chargeInvoice(ctx, org, invoice, attempt);
  const next = result.retryInMs === undefined ? null : ctx.clock.now() + result.retryInMs;
  await ctx.repos.invoices.scheduleAutopay(invoice.id, attempt, next);
  return result;
}

/** Autopay attempts that are due (a pass of the period closer): each invoice charged again, once per attempt. */
export async function retryDueAutopay(ctx: Context, limit = 100): Promise<number> {
  let paid = 0;
  for (const invoice of await ctx.repos.invoices.dueCardRetries(ctx.clock.now(), limit)) {
    const org = await ctx.repos.organizations.find(invoice.organizationId);
    if (!org?.autopayEnabled) {
      await ctx.repos.invoices.scheduleAutopay(invoice.id, invoice.autopayAttempts, null);
      continue;
    }
    try {
      if ((await chargeByMethod(ctx, org, invoice, invoice.autopayAttempts + 1)).paid) paid++;
    } catch (err) {
      // one invoice's trouble (the database) holds up no other's attempt; it comes round again
      ctx.log.error('autopay attempt failed', { invoiceId: invoice.id, err: String(err) });
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
