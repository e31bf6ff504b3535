import type { ApiShape } from '../config.js';
import { iso } from '../clock.js';
import type { LicenseRow, OrganizationRow } from '../db/repos/index.js';
import type { KeyAuth } from '../domain/auth.js';
import { shownAmount } from '../domain/billing/format.js';
import { fromMicro } from '../domain/money.js';
import type { Registration } from '../domain/organizations.js';
import { planFor } from '../domain/plans.js';
import { monthlyStreamLimitOf, type RateState } from '../domain/rate-limits.js';

// Responses carry the union of Shapes A and B where their fields do not collide (docs/api.md).

/** Shape A amounts are whole APUSD, Shape B decimals to the cent, rounded half up (billing/format.ts). */
export const amount = shownAmount;

export function registrationBody(r: Registration) {
  return {
    organizationId: r.organization.id,
    apiKey: r.apiKey,
    walletAddress: r.organization.walletAddress,
    webhookSecret: r.webhookSecret,
    scopes: r.scopes,
    message: 'Organization registered. Store the API key and webhook secret now: they are not shown again.',
  };
}

export function verifyBody(auth: KeyAuth, rate: RateState, shape: ApiShape) {
  const { org } = auth;
  const plan = planFor(org.plan);
  return {
    organization: {
      id: org.id,
      name: org.name,
      email: org.email,
      walletAddress: org.walletAddress,
      plan: org.plan,
      apusdBalance: amount(org.apusdBalanceMicro, shape),
      isActive: org.isActive,
    },
    plan: {
      name: plan.name,
      basePriceApusd: plan.basePriceApusd,
      pricePerStream: plan.pricePerStream,
      watermarkingIncluded: plan.watermarkingIncluded,
    },
    scopes: auth.key.scopes,
    apiKey: { id: auth.key.id, prefix: auth.key.prefix, name: auth.key.name },
    rateLimits: {
      // The limit that binds this key (its own when tighter), as in the X-RateLimit headers.
      perHour: rate.limit,
      remaining: rate.remaining,
      monthlyStreamLimit: monthlyStreamLimitOf(auth),
    },
  };
}

export function rotationBody(apiKey: string) {
  return {
    apiKey,
    oldKeyRevoked: true,
    message: 'API key rotated. The previous key no longer works; store this one now.',
  };
}

export interface OrganizationStats {
  streamsThisMonth: number;
  totalApiKeys: number;
  activeLicenses: number;
  licenses: LicenseRow[];
}

export function licenseBody(l: LicenseRow) {
  return {
    licenseId: l.id,
    contentId: l.contentId,
    contentType: l.contentType,
    licenseScope: l.licenseScope,
    watermarkingEnabled: l.watermarkingEnabled,
    pricePerStream: fromMicro(l.pricePerStreamMicro),
    createdAt: iso(l.createdAt),
  };
}

export function adminOrganizationBody(o: OrganizationRow & OrganizationStats, shape: ApiShape) {
  return {
    id: o.id,
    name: o.name,
    email: o.email,
    walletAddress: o.walletAddress,
    plan: o.plan,
    isActive: o.isActive,
    suspendedReason: o.suspendedReason,
    streamsThisMonth: o.streamsThisMonth,
    apusdBalance: amount(o.apusdBalanceMicro, shape),
    totalApiKeys: o.totalApiKeys,
    activeLicenses: o.activeLicenses,
    licenses: o.licenses.map(licenseBody),
    rateLimitPerHour: o.rateLimitPerHour,
    monthlyStreamLimit: o.monthlyStreamLimit,
    createdAt: iso(o.createdAt),
  };
}
