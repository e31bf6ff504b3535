import type { Context } from '../../context.js';
import type { InvoiceRow, LedgerRow, OrganizationRow } from '../../db/repos/index.js';
import { notFound } from '../../errors.js';
import { type UsageSoFar, usageSoFar } from './account.js';
import { closeDuePeriods, type CloseSummary } from './period-close.js';
import { periodNamed } from './periods.js';
import { badRequest } from '../../errors.js';

export interface Statement {
  organization: OrganizationRow;
  usage: UsageSoFar;
  /** the sum of every ledger entry: equal to the balance, or something is wrong */
  ledgerSumMicro: number;
  ledger: LedgerRow[];
  invoices: InvoiceRow[];
  invoiceTotal: number;
}

/**
 * An organization's money as an operator sees it: balance, usage, recent ledger entries and invoices (bounded pages).
 */
export async function statementOf(
  ctx: Context,
  organizationId: string,
  page = { limit: 50, offset: 0 },
): Promise<Statement> {
  // One transaction, so that the balance and the ledger's sum are read at the same instant.
  return ctx.db.transaction(async (tx) => {
    const organization = await tx.repos.organizations.find(organizationId);
    if (!organization) throw notFound('organization');
    const invoices = await tx.repos.invoices.list(organizationId, page);
    return {
      organization,
      usage: await usageSoFar(tx, organization),
      ledgerSumMicro: await tx.repos.ledger.sumOf(organizationId),
      ledger: await tx.repos.ledger.list(organizationId, page),
      invoices: invoices.rows,
      invoiceTotal: invoices.total,
    };
  });
}

/**
 * An operator's close: every due period up to the last ended more than the grace window ago, or up
 * to a named one (YYYY-MM) as soon as it has ended: naming the month is the operator's call not
 * to wait, and what lands after it goes on the next invoice as late usage.
 */
export function closePeriodsUntil(ctx: Context, label: string | undefined): Promise<CloseSummary> {
  if (label === undefined) return closeDuePeriods(ctx);
  const until = periodNamed(label);
  if (!until) throw badRequest(`period must be a month as YYYY-MM, got ${JSON.stringify(label.slice(0, 20))}`);
  if (until.end > ctx.clock.now()) throw badRequest(`period ${label} has not ended`);
  return closeDuePeriods(ctx, { until });
}
