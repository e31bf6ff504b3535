import type { Context } from '../../context.js';
import type { OrganizationRow } from '../../db/repos/index.js';
import { notFound } from '../../errors.js';
import { type Draft, draftInvoice } from './draft.js';
import { formatApusd } from './format.js';
import { isDust } from './invoicing.js';
import { billingSinceOf, firstUninvoiced } from './period-close.js';
import { periodOf } from './periods.js';

/** What autopay will do with the invoice when it is issued. */
export type AutopayAction = 'pay_from_balance' | 'charge_card' | 'carry_forward' | 'none';

export interface AutopayPlan {
  enabled: boolean;
  method: string | null;
  action: AutopayAction;
  /** the action in words, with why */
  reason: string;
}

export interface UpcomingInvoice {
  draft: Draft;
  /** when the period closer issues it: the period's end plus the grace window */
  finalizesAt: number;
  /** the moment the draft was measured at */
  asOf: number;
  autopay: AutopayPlan;
}

/**
 * The next invoice the organization will be issued, as it stands now: the close's own computation
 * (draftInvoice), written nowhere. That is the current month's, except between a month's end and
 * its close (the grace window, or a closer that was down), when it is the month not yet invoiced:
 * usage that lands meanwhile goes on that one, so showing the new month's would be wrong twice.
 */
export async function upcomingInvoice(ctx: Context, organizationId: string): Promise<UpcomingInvoice> {
  const org = await ctx.repos.organizations.find(organizationId);
  if (!org) throw notFound('organization');
  const now = ctx.clock.now();
  const lastInvoiced = (await ctx.repos.invoices.lastPeriods([org.id])).get(org.id);
  const next = firstUninvoiced(org, lastInvoiced, await billingSinceOf(ctx));
  const current = periodOf(now);
  const period = next.start < current.start ? next : current;
  const draft = await draftInvoice(ctx, org, period, now);
  draft.lines.sort(
    (a, b) =>
      a.periodStart - b.periodStart ||
      a.line.kind.localeCompare(b.line.kind) ||
      a.line.description.localeCompare(b.line.description),
  );
  const openMicro = await ctx.repos.invoices.openTotal(org.id);
  return {
    draft,
    finalizesAt: Math.max(now, period.end + ctx.config.invoiceGraceMs),
    asOf: now,
    autopay: autopayPlan(org, draft.amountMicro, org.apusdBalanceMicro - openMicro),
  };
}

/** What payIssuedInvoice will do, decided as closePeriod decides it (isDust first). */
function autopayPlan(org: OrganizationRow, amountMicro: number, freeBalanceMicro: number): AutopayPlan {
  const plan = (action: AutopayAction, reason: string): AutopayPlan => ({
    enabled: org.autopayEnabled,
    method: org.autopayMethod,
    action,
    reason,
  });
  if (amountMicro <= 0) return plan('none', 'nothing to pay: the invoice is issued paid');
  if (!org.autopayEnabled)
    return plan('none', 'autopay is off: the invoice waits to be paid (POST /api/v1/billing/invoices/{id}/pay)');
  if (isDust(org, amountMicro)) {
    return plan(
      'carry_forward',
      `${formatApusd(amountMicro)} is below the card minimum of 0.50: not charged, carried forward to the next invoice`,
    );
  }
  if (org.autopayMethod === 'fiat_card')
    return plan('charge_card', 'charged to the card on file when the invoice is issued');
  const covered = freeBalanceMicro >= amountMicro;
  const balance = `the balance not spoken for by open invoices (${formatApusd(Math.max(0, freeBalanceMicro))} APUSD)`;
  return plan(
    'pay_from_balance',
    covered
      ? `paid from the balance when issued: ${balance} covers it`
      : `${balance} does not cover it yet: paid when funds arrive`,
  );
}
