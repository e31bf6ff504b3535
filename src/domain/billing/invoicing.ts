import type { Context } from '../../context.js';
import { newId } from '../../crypto/tokens.js';
import type { InvoiceLineRow, InvoiceRow, PeriodUsageRow } from '../../db/repos/index.js';
import { badRequest, notFound } from '../../errors.js';
import { recordEvent } from '../events.js';
import { payIssuedInvoice } from './autopay.js';
import { invoiceEventData } from './invoice-events.js';
import { type Period, periodLabel } from './periods.js';
import { type Line, totalOf, type UsageGroup, usageLines } from './pricing.js';
import { subscriptionCharge } from './subscriptions-rule.js';
import { type Terms, termsOf } from './terms.js';

const SETTLE_AFTER_MS = 3_600_000;

export interface IssuedInvoice {
  invoice: InvoiceRow;
  lines: InvoiceLineRow[];
  /** false when the period had been invoiced already (by this server or another) */
  created: boolean;
}

/**
 * Closes one organization's period: one invoice with its lines (subscriptions, usage, late usage
 * of earlier periods), in one transaction with the record of what it invoiced. Closing it again,
 * here or on another server at the same moment, gives the one invoice there is: the unique
 * (organization, period) index decides a race, and the loser's transaction leaves nothing.
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
  if (issued.created) {
    ctx.wakeWebhooks();
    if (issued.invoice.paymentStatus === 'open') await payIssuedInvoice(ctx, issued.invoice);
  }
  return issued;
}

async function issue(tx: Context, organizationId: string, period: Period): Promise<IssuedInvoice> {
  const existing = await tx.repos.invoices.forPeriod(organizationId, period.start);
  if (existing) return { invoice: existing, lines: await tx.repos.invoices.linesOf(existing.id), created: false };
  const org = await tx.repos.organizations.find(organizationId);
  if (!org) throw notFound('organization');
  const now = tx.clock.now();
  const charged: { line: Line; periodStart: number }[] = [];
  for (const s of await tx.repos.subscriptions.liveAt(organizationId, period.start)) {
    const line = subscriptionCharge(s, period);
    if (line) charged.push({ line, periodStart: period.start });
  }
  const own = await meterPeriod(tx, organizationId, period, termsOf(org), now);
  await tx.repos.usage.insert(own.usage);
  for (const line of own.lines) charged.push({ line, periodStart: period.start });
  const late = await lateUsage(tx, organizationId, period, now);
  charged.push(...late.lines);

  const amountMicro = totalOf(charged.map((c) => c.line));
  const invoiceId = newId();
  const invoice: InvoiceRow = {
    id: invoiceId,
    organizationId,
    periodStart: period.start,
    periodEnd: period.end,
    totalStreams: own.usage.streams + late.streams,
    totalBytes: own.usage.bytes + late.bytes,
    amountMicro,
    // Nothing to pay is paid: such an invoice never waits on autopay or shows as owed.
    paymentStatus: amountMicro > 0 ? 'open' : 'paid',
    issuedAt: now,
    paidAt: amountMicro > 0 ? null : now,
    autopayAttempts: 0,
    nextAutopayAt: null,
  };
  const lines: InvoiceLineRow[] = charged.map(({ line, periodStart }) => ({ id: newId(), invoiceId, periodStart, ...line }));
  await tx.repos.invoices.insert(invoice, lines);
  await recordEvent(tx, organizationId, 'invoice.issued', invoiceEventData(invoice), { webhookUrl: org.webhookUrl });
  return { invoice, lines, created: true };
}

/** A period's sessions priced at the terms: the lines, and the record of what they invoiced. */
async function meterPeriod(tx: Context, organizationId: string, period: Period, terms: Terms, now: number) {
  const groups = await tx.repos.usage.measure(organizationId, period.start, period.end);
  const lines = usageLines(terms, groups);
  const usage: PeriodUsageRow = {
    organizationId,
    periodStart: period.start,
    periodEnd: period.end,
    ...sums(groups),
    amountMicro: totalOf(lines),
    terms: { ...terms },
    // An hour after the period's end and after its last session expired, its usage is all in: a
    // session committed as the period closed, or a segment sent as its session expired, lands
    // within that hour. Until then each close measures the period again.
    settled: now >= period.end + SETTLE_AFTER_MS && groups.every((g) => g.lastExpiry + SETTLE_AFTER_MS <= now),
  };
  return { lines, usage };
}

const sums = (groups: readonly UsageGroup[]) => ({
  streams: groups.reduce((s, g) => s + g.streams, 0),
  bytes: groups.reduce((s, g) => s + g.bytes, 0),
});

/**
 * Usage of earlier invoiced periods that landed after their invoice (bytes of a session still
 * playing, a session committed as the period closed): measured again, priced again at that
 * period's recorded terms, and the difference from what was invoiced is a late line. The record
 * moves in the same transaction, so the next close starts from here: nothing lost, nothing twice.
 */
async function lateUsage(tx: Context, organizationId: string, period: Period, now: number) {
  const out = { lines: [] as { line: Line; periodStart: number }[], streams: 0, bytes: 0 };
  for (const billed of await tx.repos.usage.unsettled(organizationId, period.start)) {
    const earlier = { start: billed.periodStart, end: billed.periodEnd };
    const again = await meterPeriod(tx, organizationId, earlier, billed.terms as unknown as Terms, now);
    const streams = again.usage.streams - billed.streams;
    const bytes = again.usage.bytes - billed.bytes;
    const amountMicro = again.usage.amountMicro - billed.amountMicro;
    if (streams !== 0 || bytes !== 0 || amountMicro !== 0) {
      const description = `late usage of ${periodLabel(earlier)}: ${streams} streams, ${bytes} bytes`;
      out.lines.push({ line: { kind: 'late_usage', description, quantity: 1, unitPriceMicro: amountMicro, amountMicro }, periodStart: earlier.start });
      out.streams += streams;
      out.bytes += bytes;
    }
    await tx.repos.usage.update({ ...billed, ...again.usage, terms: billed.terms });
  }
  return out;
}
