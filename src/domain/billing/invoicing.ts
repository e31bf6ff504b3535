import type { Context } from '../../context.js';
import { newId } from '../../crypto/tokens.js';
import type { InvoiceLineRow, InvoiceRow, OrganizationRow } from '../../db/repos/index.js';
import { badRequest, DrmError, notFound } from '../../errors.js';
import { recordEvent } from '../events.js';
import { payIssuedInvoice } from './autopay.js';
import { MIN_CENTS } from './card-funding.js';
import { draftInvoice } from './draft.js';
import { invoiceEventData } from './invoice-events.js';
import { type Period, periodLabel } from './periods.js';

/** The card processor's smallest charge in micro-APUSD (1 APUSD = 1 USD). */
export const MIN_CARD_CHARGE_MICRO = MIN_CENTS * 10_000;

export interface IssuedInvoice {
  invoice: InvoiceRow;
  lines: InvoiceLineRow[];
  /** false when the period had been invoiced already (by this server or another) */
  created: boolean;
}

/**
 * Closes one organization's period: one invoice with its lines (subscriptions, usage, late usage
 * of earlier periods, amounts carried forward), in one transaction with the record of what it
 * invoiced. Closing it again, here or on another server at the same moment, gives the one invoice
 * there is: the unique (organization, period) index decides a race, and the loser's transaction
 * leaves nothing.
 */
export async function closePeriod(ctx: Context, organizationId: string, period: Period): Promise<IssuedInvoice> {
  if (period.end > ctx.clock.now()) throw badRequest(`period ${periodLabel(period)} has not ended`);
  let issued: IssuedInvoice;
  try {
    issued = await ctx.db.transaction((tx) => issue(tx, organizationId, period));
  } catch (err) {
    const existing = await ctx.repos.invoices.forPeriod(organizationId, period.start);
    if (!existing) throw err;
    return { invoice: existing, lines: await ctx.repos.invoices.linesOf(existing.id), created: false };
  }
  // A dust invoice waits for the next one instead of a charge (isDust).
  if (issued.created && issued.invoice.paymentStatus === 'open' && !issued.invoice.carryForward)
    await payIssuedInvoice(ctx, issued.invoice);
  return issued;
}

async function issue(tx: Context, organizationId: string, period: Period): Promise<IssuedInvoice> {
  const existing = await tx.repos.invoices.forPeriod(organizationId, period.start);
  if (existing) return { invoice: existing, lines: await tx.repos.invoices.linesOf(existing.id), created: false };
  const org = await tx.repos.organizations.find(organizationId);
  if (!org) throw notFound('organization');
  const now = tx.clock.now();
  const draft = await draftInvoice(tx, org, period, now);
  const invoiceId = newId();
  await tx.repos.usage.insert(draft.usage);
  for (const record of draft.remeasured) await tx.repos.usage.update(record);
  for (const c of draft.carried) {
    // Paid by hand since the draft read it: this close gives way, and the next pass drafts again without it.
    if (!(await tx.repos.invoices.markCarried(c.id, invoiceId)))
      throw new DrmError('CONFLICT', `invoice ${c.id} was paid while it was being carried forward`);
  }
  const amountMicro = draft.amountMicro;
  const invoice: InvoiceRow = {
    id: invoiceId,
    organizationId,
    periodStart: period.start,
    periodEnd: period.end,
    totalStreams: draft.totalStreams,
    totalBytes: draft.totalBytes,
    amountMicro,
    // Nothing to pay is paid: such an invoice never waits on autopay or shows as owed.
    paymentStatus: amountMicro > 0 ? 'open' : 'paid',
    issuedAt: now,
    paidAt: amountMicro > 0 ? null : now,
    autopayAttempts: 0,
    nextAutopayAt: null,
    carryForward: isDust(org, amountMicro),
    carriedInto: null,
  };
  const lines: InvoiceLineRow[] = draft.lines.map(({ line, periodStart }) => ({
    id: newId(),
    invoiceId,
    periodStart,
    ...line,
  }));
  await tx.repos.invoices.insert(invoice, lines);
  await recordEvent(tx, organizationId, 'invoice.issued', invoiceEventData(invoice), { webhookUrl: org.webhookUrl });
  return { invoice, lines, created: true };
}

/**
 * Too small to charge to a card (the processor's minimum is 0.50): under card autopay such an
 * invoice is issued open and not charged (charging would take the minimum, more than is owed), and
 * the next invoice takes its amount as a carried_forward line, voiding it in the same transaction.
 * The ledger and the balance are not touched: the amount is owed once, on one invoice at a time.
 */
export function isDust(org: OrganizationRow, amountMicro: number): boolean {
  return (
    amountMicro > 0 && amountMicro < MIN_CARD_CHARGE_MICRO && org.autopayEnabled && org.autopayMethod === 'fiat_card'
  );
}
