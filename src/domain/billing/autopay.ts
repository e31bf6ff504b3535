import type { Context } from '../../context.js';
import type { InvoiceRow } from '../../db/repos/index.js';
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

/**
 * Right after an invoice is issued: with autopay on and the APUSD method, pay it from the balance;
 * when the balance is short (or the method cannot pay yet), say so once with invoice.payment_failed
 * and leave it open for payOpenInvoices to retry when funds arrive.
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
    reason = `autopay method ${org.autopayMethod} is not configured on this deployment`;
  }
  await ctx.db.transaction((tx) =>
    recordEvent(tx, invoice.organizationId, 'invoice.payment_failed', { ...invoiceEventData(invoice), reason }, { webhookUrl: org.webhookUrl }),
  );
  ctx.wakeWebhooks();
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
