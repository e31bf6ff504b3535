import type { Context } from '../../context.js';
import { RepeatingPass } from '../repeating-pass.js';
import { payOpenInvoices, retryDueAutopay } from './autopay.js';
import { closePeriod } from './invoicing.js';
import { nextPeriod, type Period, periodLabel, periodOf, previousPeriod } from './periods.js';

const PAGE = 500;
/**
 * The migration that brought billing: a deployment upgraded to it bills from that month on, not for the months before.
 */
const BILLING_MIGRATION = 9;

export interface CloseSummary {
  /** the last period that has ended */
  period: Period;
  issued: number;
  /** invoiced before (by an earlier run or another server) */
  existing: number;
  /** organizations whose close failed this pass (logged; the next pass tries again) */
  failed: number;
}

/** When billing came to this deployment (0: it always had it). */
export const billingSinceOf = async (ctx: Context): Promise<number> =>
  (await ctx.db.migratedAt(BILLING_MIGRATION)) ?? 0;

/**
 * An organization's first period not invoiced: the month after its last invoice, else the month it registered in or
 * billing came in.
 */
export function firstUninvoiced(
  org: { createdAt: number },
  lastInvoiced: number | undefined,
  billingSince: number,
): Period {
  return lastInvoiced === undefined
    ? periodOf(Math.max(org.createdAt, billingSince))
    : nextPeriod(periodOf(lastInvoiced));
}

/**
 * The last period whose invoices are due: it ended at least the grace window ago (late events land on the right
 * invoice).
 */
export const lastDuePeriod = (now: number, graceMs: number): Period => previousPeriod(periodOf(now - graceMs));

/**
 * Issues every invoice that is due: for each organization, each period from its first not invoiced
 * to the last one ended more than the grace window ago (`--invoice-grace`), or to `until` (an
 * operator's named month, as soon as it has ended). A server that was down for months catches up
 * in order. Safe to run on several servers at once.
 */
export async function closeDuePeriods(ctx: Context, options: { until?: Period } = {}): Promise<CloseSummary> {
  const last = options.until ?? lastDuePeriod(ctx.clock.now(), ctx.config.invoiceGraceMs);
  const summary: CloseSummary = { period: last, issued: 0, existing: 0, failed: 0 };
  const billingSince = await billingSinceOf(ctx);
  for (let offset = 0; ; offset += PAGE) {
    const orgs = await ctx.repos.organizations.page(PAGE, offset);
    const lastInvoiced = await ctx.repos.invoices.lastPeriods(orgs.map((o) => o.id));
    for (const org of orgs) {
      let period = firstUninvoiced(org, lastInvoiced.get(org.id), billingSince);
      try {
        for (; period.start <= last.start; period = nextPeriod(period)) {
          const { created } = await closePeriod(ctx, org.id, period);
          if (created) summary.issued++;
          else summary.existing++;
        }
      } catch (err) {
        // One organization's failure (logged, tried again next pass) holds up no other's invoices.
        summary.failed++;
        ctx.log.error('closing a billing period failed', {
          organizationId: org.id,
          period: periodLabel(period),
          err: String(err),
        });
      }
    }
    if (orgs.length >= PAGE) continue;
    await retryAutopay(ctx, summary);
    return summary;
  }
}

/**
 * Open invoices of organizations with APUSD autopay on: an autopay that failed for any reason but a short balance is
 * tried again each pass.
 */
async function retryAutopay(ctx: Context, summary: CloseSummary): Promise<void> {
  try {
    await retryDueAutopay(ctx);
  } catch (err) {
    summary.failed++;
    ctx.log.error('card autopay failed', { err: String(err) });
  }
  for (const organizationId of await ctx.repos.invoices.openUnderAutopay(PAGE)) {
    try {
      await payOpenInvoices(ctx, organizationId);
    } catch (err) {
      summary.failed++;
      ctx.log.error('autopay failed', { organizationId, err: String(err) });
    }
  }
}

/**
 * The server's period closer: looks once a minute (and at start) whether a period has ended (and
 * its grace window passed) and closes what is due. Every server runs one; the invoices' unique index keeps them from
 * doubling.
 */
export class PeriodCloser extends RepeatingPass {
  constructor(ctx: Context, everyMs = 60_000) {
    super(
      async () => {
        const s = await closeDuePeriods(ctx);
        if (s.issued > 0) ctx.log.info('billing periods closed', { issued: s.issued });
      },
      everyMs,
      (err) => ctx.log.error('closing billing periods failed', { err: String(err) }),
    );
  }
}
