import type { OrganizationRow } from '../../db/repos/index.js';
import { badRequest } from '../../errors.js';
import { hasSixDecimalsAtMost, toMicro } from '../money.js';
import { planFor } from '../plans.js';
import { asObject, type Fields, optionalNumber } from '../validate.js';

/** Annual billing saves 15% (spec section 1): 99 a month is 1,009.80 a year. */
export const ANNUAL_DISCOUNT_PCT = 15;

/**
 * What an organization pays: its plan's list prices (src/domain/plans.ts), each replaceable by an
 * admin for one organization (Enterprise and White-Label contracts). Integers of micro-APUSD.
 */
export interface Terms {
  /** one product's subscription for a month */
  monthlyPriceMicro: number;
  /** one product's subscription for a year, paid at once */
  annualPriceMicro: number;
  pricePerStreamMicro: number;
  pricePerGbMicro: number;
  includedStreams: number;
  includedGb: number;
  revenueSharePct: number;
}

export const TERM_KEYS = [
  'monthlyPriceMicro',
  'annualPriceMicro',
  'pricePerStreamMicro',
  'pricePerGbMicro',
  'includedStreams',
  'includedGb',
  'revenueSharePct',
] as const satisfies readonly (keyof Terms)[];

export const annualPrice = (monthlyMicro: number): number =>
  Math.round((monthlyMicro * 12 * (100 - ANNUAL_DISCOUNT_PCT)) / 100);

export function listTerms(planCode: string): Terms {
  const plan = planFor(planCode);
  const monthly = toMicro(plan.basePriceApusd);
  return {
    monthlyPriceMicro: monthly,
    annualPriceMicro: annualPrice(monthly),
    pricePerStreamMicro: toMicro(plan.pricePerStream),
    pricePerGbMicro: toMicro(plan.pricePerGb),
    includedStreams: plan.includedStreams,
    includedGb: plan.includedGb,
    revenueSharePct: plan.revenueSharePct,
  };
}

export function termsOf(org: Pick<OrganizationRow, 'plan' | 'billingTerms'>): Terms {
  return { ...listTerms(org.plan), ...(org.billingTerms ?? {}) } as Terms;
}

/** The request fields an admin may set, in APUSD (prices) and units (included amounts), and their keys. */
const ADMIN_FIELDS: [field: string, key: keyof Terms, apusd: boolean, max: number][] = [
  ['monthlyPrice', 'monthlyPriceMicro', true, 1_000_000],
  ['annualPrice', 'annualPriceMicro', true, 12_000_000],
  ['pricePerStream', 'pricePerStreamMicro', true, 1_000],
  ['pricePerGb', 'pricePerGbMicro', true, 1_000],
  ['includedStreams', 'includedStreams', false, 1e12],
  ['includedGb', 'includedGb', false, 1e9],
  ['revenueSharePct', 'revenueSharePct', false, 100],
];

/** Custom terms from an admin's request: only the fields given, each checked; an empty object clears them. */
export function readTerms(terms: unknown): Partial<Terms> {
  const f: Fields = asObject(terms, 'terms');
  const out: Partial<Terms> = {};
  for (const [field, key, apusd, max] of ADMIN_FIELDS) {
    const v = optionalNumber(f, field, { min: 0, max, integer: !apusd });
    if (v === undefined) continue;
    const micro = apusd ? toMicro(v) : v;
    if (apusd && !hasSixDecimalsAtMost(v)) throw badRequest(`${field} has more than 6 decimals`);
    out[key] = micro;
  }
  if (out.monthlyPriceMicro !== undefined && out.annualPriceMicro === undefined)
    out.annualPriceMicro = annualPrice(out.monthlyPriceMicro);
  return out;
}
