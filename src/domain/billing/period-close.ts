import type { Context } from '../../context.js';
import { RepeatingPass } from '../repeating-pass.js';
import { payOpenInvoices, retryCardAutopay } from './autopay.js';
import { closePeriod } from './invoicing.js';
import { nextPeriod, type Period, periodLabel, periodOf, previousPeriod } from './periods.js';

const PAGE = 500;
/** The migration that brought billing: a deployment upgraded to it bills from that month on, not for the months before. */
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

/**
 * Issues every invoice that is due: for each organization, each ended period from its first (the
 * month it registered in, or billing came to the deployment in, or the month after its last
 * invoice) to the last one ended. A server that was down for months catches up in order. Safe to
 * run on several servers at once.
 */
export async function closeDuePeriods(ctx: Context, options: { until?: Period } = {}): Promise<CloseSummary> {
  const last = options.until ?? previousPeriod(periodOf(ctx.clock.now()));
  const summary: CloseSummary = { period: last, issued: 0, existing: 0, failed: 0 };
  const billingSince = (await ctx.db.migratedAt(BILLING_MIGRATION)) ?? 0;
  for (let offset = 0; ; offset += PAGE) {
    const orgs = await ctx.repos.organizations.page(PAGE, offset);
    const lastInvoiced = await ctx.repos.invoices.lastPeriods(orgs.map((o) => o.id));
    for (const org of orgs) {
      const done = lastInvoiced.get(org.id);
      let period = done === undefined ? periodOf(Math.max(org.createdAt, billingSince)) : nextPeriod(periodOf(done));
      try {
        for (; period.start <= last.start; period = nextPeriod(period)) {
          const { created } = await closePeriod(ctx, org.id, period);
          if (created) summary.issued++;
          else summary.existing++;
        }
      } catch (err) {
        // One organization's failure (logged, tried again next pass) holds up no other's invoices.
        summary.failed++;
        ctx.log.error('closing a billing period failed', { organizationId: org.id, period: periodLabel(period), err: String(err) });
      }
    }
    if (orgs.length >= PAGE) continue;
    await retryAutopay(ctx, summary);
    return summary;
  }
}

/** Open invoices of organizations with APUSD autopay on: an autopay that failed for any reason but a short balance is tried again each pass. */
async function retryAutopay(ctx: Context, summary: CloseSummary): Promise<void> {
  try {
    await retryCardAutopay(ctx);
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
 * The server's period closer: looks once a minute (and at start) whether a period has ended and
 * closes what is due. Every server runs one; the invoices' unique index keeps them from doubling.
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
