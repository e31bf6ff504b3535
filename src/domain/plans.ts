/**
 * The plans of the spec's section 1. Prices are APUSD. The spec gives Paid's base price; the
 * per-stream, per-GB, included amounts and Enterprise/White-Label figures are list prices of
 * our own (docs/api.md, "Plans"): White-Label is priced per contract, so its base shows 0.
 */
export interface Plan {
  name: 'Paid' | 'Enterprise' | 'White-Label';
  basePriceApusd: number;
  pricePerStream: number;
  pricePerGb: number;
  revenueSharePct: number;
  includedStreams: number;
  includedGb: number;
  watermarkingIncluded: boolean;
  whiteLabelAllowed: boolean;
  poweredByRemovable: boolean;
}

export const PLANS: readonly Plan[] = [
  {
    name: 'Paid',
    basePriceApusd: 99,
    pricePerStream: 0.01,
    pricePerGb: 0.05,
    revenueSharePct: 0,
    includedStreams: 10_000,
    includedGb: 100,
    watermarkingIncluded: true,
    whiteLabelAllowed: false,
    poweredByRemovable: false,
  },
  {
    name: 'Enterprise',
    basePriceApusd: 999,
    pricePerStream: 0.005,
    pricePerGb: 0.03,
    revenueSharePct: 0,
    includedStreams: 250_000,
    includedGb: 2_500,
    watermarkingIncluded: true,
    whiteLabelAllowed: false,
    poweredByRemovable: false,
  },
  {
    name: 'White-Label',
    basePriceApusd: 0,
    pricePerStream: 0.003,
    pricePerGb: 0.02,
    revenueSharePct: 10,
    includedStreams: 1_000_000,
    includedGb: 10_000,
    watermarkingIncluded: true,
    whiteLabelAllowed: true,
    poweredByRemovable: true,
  },
];

/** Plan values an organization can carry; `paid` (Shape A) and `professional` (Shape B) are the Paid plan. */
export const PLAN_CODES = ['paid', 'professional', 'enterprise', 'white-label'] as const;
export type PlanCode = (typeof PLAN_CODES)[number];
/** Plans an organization may pick itself at registration; the others are assigned by an admin. */
export const SELF_SERVICE_PLANS: readonly PlanCode[] = ['paid', 'professional'];

export function planFor(code: string): Plan {
  const name = code === 'enterprise' ? 'Enterprise' : code === 'white-label' ? 'White-Label' : 'Paid';
  return PLANS.find((p) => p.name === name) as Plan;
}

/** Defaults when an admin has not set a limit: requests per hour and streams per month. */
export const DEFAULT_LIMITS: Record<Plan['name'], { perHour: number; monthlyStreams: number }> = {
  Paid: { perHour: 1_000, monthlyStreams: 100_000 },
  Enterprise: { perHour: 10_000, monthlyStreams: 2_000_000 },
  'White-Label': { perHour: 50_000, monthlyStreams: 10_000_000 },
};
