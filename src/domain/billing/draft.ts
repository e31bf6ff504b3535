import type { Context } from '../../context.js';
import type { InvoiceRow, OrganizationRow, PeriodUsageRow } from '../../db/repos/index.js';
import { type Period, periodLabel, periodOf } from './periods.js';
import { type Line, totalOf, type UsageGroup, usageLines } from './pricing.js';
import { subscriptionCharge } from './subscriptions-rule.js';
import { type Terms, termsOf } from './terms.js';

const SETTLE_AFTER_MS = 3_600_000;

/** A line with the period it charges for (earlier than the invoice's for late usage and carried amounts). */
export interface DraftLine {
  line: Line;
  periodStart: number;
}

/**
 * An organization's invoice of a period as it stands at `now`, written nowhere: what the close
 * issues (it writes this draft) and what the upcoming invoice shows (it only reads it), one
 * computation for both so that they cannot disagree.
 */
export interface Draft {
  period: Period;
  lines: DraftLine[];
  totalStreams: number;
  totalBytes: number;
  amountMicro: number;
  /** the record of what this period's usage invoices */
  usage: PeriodUsageRow;
  /** earlier periods' records measured again (their late usage is on this draft) */
  remeasured: PeriodUsageRow[];
  /** earlier invoices below the card minimum whose amounts this draft carries forward */
  carried: InvoiceRow[];
}

export async function draftInvoice(tx: Context, org: OrganizationRow, period: Period, now: number): Promise<Draft> {
  const lines: DraftLine[] = [];
  for (const s of await tx.repos.subscriptions.liveAt(org.id, period.start)) {
    const line = subscriptionCharge(s, period);
    if (line) lines.push({ line, periodStart: period.start });
  }
  const own = await meterPeriod(tx, org.id, period, termsOf(org), now);
  for (const line of own.lines) lines.push({ line, periodStart: period.start });
  const late = await lateUsage(tx, org.id, period, now);
  lines.push(...late.lines);
  const carried = await tx.repos.invoices.carryable(org.id, period.start);
  for (const c of carried) lines.push({ line: carriedLine(c), periodStart: c.periodStart });
  return {
    period,
    lines,
    totalStreams: own.usage.streams + late.streams,
    totalBytes: own.usage.bytes + late.bytes,
    amountMicro: totalOf(lines.map((l) => l.line)),
    usage: own.usage,
    remeasured: late.remeasured,
    carried,
  };
}

/** An invoice too small to charge, on the next one: its amount once, under its own period. */
function carriedLine(c: InvoiceRow): Line {
  const description = `carried forward from ${periodLabel(periodOf(c.periodStart))} (below the card minimum)`;
  return {
    kind: 'carried_forward',
    description,
    quantity: 1,
    unitPriceMicro: c.amountMicro,
    amountMicro: c.amountMicro,
  };
}

/** A period's sessions priced at the terms: the lines, and the record of what they invoiced. */
async function meterPeriod(tx: Context, organizationId: string, period: Period, terms: Terms, now: number) {
  const groups = await tx.repos.usage.measure(organizationId, period.start);
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
 * period's recorded terms, and the difference from what was invoiced is a late line. The close
 * moves the records in the same transaction as the invoice, so the next close starts from there:
 * nothing lost, nothing twice.
 */
async function lateUsage(tx: Context, organizationId: string, period: Period, now: number) {
  const out = { lines: [] as DraftLine[], streams: 0, bytes: 0, remeasured: [] as PeriodUsageRow[] };
  for (const billed of await tx.repos.usage.unsettled(organizationId, period.start)) {
    const earlier = { start: billed.periodStart, end: billed.periodEnd };
    const again = await meterPeriod(tx, organizationId, earlier, billed.terms as unknown as Terms, now);
    const streams = again.usage.streams - billed.streams;
    const bytes = again.usage.bytes - billed.bytes;
    const amountMicro = again.usage.amountMicro - billed.amountMicro;
    if (streams !== 0 || bytes !== 0 || amountMicro !== 0) {
      const description = `late usage of ${periodLabel(earlier)}: ${streams} streams, ${bytes} bytes`;
      out.lines.push({
        line: { kind: 'late_usage', description, quantity: 1, unitPriceMicro: amountMicro, amountMicro },
        periodStart: earlier.start,
      });
      out.streams += streams;
      out.bytes += bytes;
    }
    out.remeasured.push({ ...billed, ...again.usage, terms: billed.terms });
  }
  return out;
}
