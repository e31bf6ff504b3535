import type { InvoiceRow } from '../../db/repos/index.js';

/** What the invoice.* events carry (docs/billing.md, "Events"): ids, the period and the exact amount. */
export const invoiceEventData = (i: InvoiceRow) => ({
  invoiceId: i.id,
  periodStart: new Date(i.periodStart).toISOString(),
  periodEnd: new Date(i.periodEnd).toISOString(),
  amountMicroApusd: i.amountMicro,
  paymentStatus: i.paymentStatus,
});
