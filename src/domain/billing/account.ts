import type { Context } from '../../context.js';
import type { InvoiceLineRow, InvoiceRow, OrganizationRow } from '../../db/repos/index.js';
import { notFound } from '../../errors.js';
import { isUuid } from '../validate.js';
import { type Period, periodOf } from './periods.js';
import { totalOf, usageLines } from './pricing.js';
import { subscriptionCharge } from './subscriptions-rule.js';
import { termsOf } from './terms.js';

export interface UsageSoFar {
  period: Period;
  totalStreams: number;
  totalBytes: number;
  /** what the current period's invoice would charge if it closed now */
  amountDueMicro: number;
  balanceMicro: number;
  /** open invoices plus amountDue: what the balance is spoken for */
  pendingChargesMicro: number;
  /** what came in by card payments (Shape A's fiatBalance) */
  fiatMicro: number;
}

/** The current period's metering and charges so far, measured as the close will measure them. */
export async function usageSoFar(ctx: Context, org: OrganizationRow): Promise<UsageSoFar> {
  const fresh = (await ctx.repos.organizations.find(org.id)) ?? org;
  const period = periodOf(ctx.clock.now());
  const groups = await ctx.repos.usage.measure(org.id, period.start);
  const subscriptions = (await ctx.repos.subscriptions.liveAt(org.id, period.start)).map((s) =>
    subscriptionCharge(s, period),
  );
  const lines = [...usageLines(termsOf(fresh), groups), ...subscriptions.filter((l) => l !== undefined)];
  const amountDueMicro = totalOf(lines);
  return {
    period,
    totalStreams: groups.reduce((s, g) => s + g.streams, 0),
    totalBytes: groups.reduce((s, g) => s + g.bytes, 0),
    amountDueMicro,
    balanceMicro: fresh.apusdBalanceMicro,
    pendingChargesMicro: (await ctx.repos.invoices.openTotal(org.id)) + amountDueMicro,
    fiatMicro: await ctx.repos.ledger.sumOfKind(org.id, 'card_payment'),
  };
}

/** One of the organization's invoices with its lines (another organization's do not exist for it). */
export async function ownInvoice(
  ctx: Context,
  org: OrganizationRow,
  invoiceId: string,
): Promise<{ invoice: InvoiceRow; lines: InvoiceLineRow[] }> {
  const invoice = isUuid(invoiceId) ? await ctx.repos.invoices.find(invoiceId) : undefined;
  if (!invoice || invoice.organizationId !== org.id) throw notFound('invoice');
  return { invoice, lines: await ctx.repos.invoices.linesOf(invoice.id) };
}
