import { monthStart } from '../../clock.js';
import type { Context } from '../../context.js';
import { isEvmAddress } from '../../crypto/wallets.js';
import type { OrganizationRow } from '../../db/repos/index.js';
import { badRequest, DrmError, notFound } from '../../errors.js';
import { recordEvent } from '../events.js';
import { isAdminWallet, issueAdminToken } from './sign-in.js';
import { asObject, isUuid, optionalNumber, optionalString, requiredString } from '../validate.js';

const MAX_PER_HOUR = 10_000_000;

/** Licenses listed with each organization in the admin overview (activeLicenses counts them all). */
export const LISTED_LICENSES = 100;

/**
 * The admin overview of organizations, with this month's streams, balance, keys and licenses (each with its
 * watermarking flag).
 */
export async function listOrganizations(ctx: Context, page: { limit: number; offset: number }) {
  const orgs = await ctx.repos.organizations.listWithStats({ monthStart: monthStart(ctx.clock.now()), ...page });
  const licenses = await ctx.repos.licenses.activeFor(
    orgs.map((o) => o.id),
    LISTED_LICENSES,
  );
  return orgs.map((o) => ({ ...o, licenses: licenses.filter((l) => l.organizationId === o.id) }));
}

/** The organization, read through the repositories given (a transaction's, where it changes). */
async function findOrganization(ctx: Context, id: string): Promise<OrganizationRow> {
  const org = isUuid(id) ? await ctx.repos.organizations.find(id) : undefined;
  if (!org) throw notFound('organization');
  return org;
}

export interface RateLimitChange {
  rateLimitPerHour?: number;
  monthlyStreamLimit?: number;
  keyId?: string;
}

export function readRateLimitChange(body: unknown): RateLimitChange {
  const f = asObject(body);
  const change: RateLimitChange = {
    rateLimitPerHour: optionalNumber(f, 'rateLimitPerHour', { integer: true, min: 1, max: MAX_PER_HOUR }),
    monthlyStreamLimit: optionalNumber(f, 'monthlyStreamLimit', { integer: true, min: 0, max: 1_000_000_000 }),
    keyId: optionalString(f, 'keyId', { max: 64 }),
  };
  if (change.rateLimitPerHour === undefined && change.monthlyStreamLimit === undefined) {
    throw badRequest('give rateLimitPerHour, monthlyStreamLimit or both');
  }
  if (change.keyId !== undefined && change.monthlyStreamLimit !== undefined) {
    throw badRequest('monthlyStreamLimit is set for the organization, not for one key');
  }
  if (change.keyId !== undefined && change.rateLimitPerHour === undefined) {
    throw badRequest('a per-key limit needs rateLimitPerHour');
  }
  return change;
}

/** Sets the organization's hourly and monthly limits, or with keyId one key's own hourly limit. */
export async function setRateLimit(ctx: Context, organizationId: string, change: RateLimitChange): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const org = await findOrganization(tx, organizationId);
    if (change.keyId !== undefined) {
      const key = isUuid(change.keyId) ? await tx.repos.apiKeys.find(change.keyId) : undefined;
      if (!key || key.organizationId !== org.id) throw notFound('API key');
      await tx.repos.apiKeys.setRateLimit(key.id, change.rateLimitPerHour ?? null);
      return;
    }
    await tx.repos.organizations.update(org.id, {
      ...(change.rateLimitPerHour !== undefined && { rateLimitPerHour: change.rateLimitPerHour }),
      ...(change.monthlyStreamLimit !== undefined && { monthlyStreamLimit: change.monthlyStreamLimit }),
    });
  });
}

/** Suspends an organization: every call with its keys is refused, and it hears organization.suspended. */
export async function suspendOrganization(ctx: Context, organizationId: string, body: unknown): Promise<void> {
  const reason = requiredString(asObject(body), 'reason', { max: 500 });
  await ctx.db.transaction(async (tx) => {
    const org = await findOrganization(tx, organizationId);
    if (!org.isActive) throw new DrmError('CONFLICT', 'organization is already suspended');
    await tx.repos.organizations.update(org.id, {
      isActive: false,
      suspendedReason: reason,
      suspendedAt: ctx.clock.now(),
    });
    await recordEvent(tx, org.id, 'organization.suspended', { organizationId: org.id, reason });
  });
}

export async function reactivateOrganization(ctx: Context, organizationId: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const org = await findOrganization(tx, organizationId);
    if (org.isActive) throw new DrmError('CONFLICT', 'organization is not suspended');
    await tx.repos.organizations.update(org.id, { isActive: true, suspendedReason: null, suspendedAt: null });
  });
}

export async function grantAdmin(ctx: Context, address: string): Promise<string> {
  if (!isEvmAddress(address)) throw badRequest(`${address} is not an EVM address`);
  const a = address.toLowerCase();
  await ctx.repos.admins.grant(a, ctx.clock.now());
  return a;
}

/**
 * Takes platform admin away from a granted wallet; its tokens stop working at once. A wallet that
 * was never granted is NOT_FOUND (one named in DRM_ADMIN_WALLETS is removed there, not here).
 */
export async function revokeAdmin(ctx: Context, address: string): Promise<string> {
  if (!isEvmAddress(address)) throw badRequest(`${address} is not an EVM address`);
  const a = address.toLowerCase();
  if (!(await ctx.repos.admins.revoke(a))) {
    throw new DrmError(
      'NOT_FOUND',
      ctx.config.adminWallets.includes(a)
        ? `${a} is an admin through DRM_ADMIN_WALLETS; remove it there`
        : `${a} is not a platform admin`,
    );
  }
  return a;
}

/** A sign-in token for an admin wallet, made from the deployment's secret (drm admin token). */
export async function adminTokenFor(
  ctx: Context,
  address: string,
): Promise<{ token: string; address: string; expiresAt: string }> {
  if (!isEvmAddress(address)) throw badRequest(`${address} is not an EVM address`);
  if (!(await isAdminWallet(ctx, address)))
    throw new DrmError(
      'ADMIN_REQUIRED',
      `wallet ${address} is not a platform admin (grant it first: drm admin grant ${address})`,
    );
  return issueAdminToken(ctx, address);
}
