import { iso } from '../src/clock.js';
import {
  adminTokenFor,
  grantAdmin,
  listOrganizations,
  reactivateOrganization,
  readRateLimitChange,
  revokeAdmin,
  setRateLimit,
  suspendOrganization,
} from '../src/domain/admin/organizations.js';
import { grantLicense } from '../src/domain/licenses.js';
import { paging } from '../src/domain/validate.js';
import { badRequest } from '../src/errors.js';
import { adminOrganizationBody } from '../src/present/organizations.js';
import type { DbOptions } from './options.js';
import { printJson, printTable } from './output.js';
import { withContext } from './with-context.js';

// `drm admin …`: the same core calls as the admin API, on the database the options name.

const number = (value: string | undefined, flag: string): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw badRequest(`${flag} must be a number, got "${value}"`);
  return n;
};

export const grant = (wallet: string, opts: DbOptions) =>
  withContext(opts, async (ctx, out) => {
    const address = await grantAdmin(ctx, wallet);
    if (out.json) printJson(out, { success: true, address });
    else out.write(`${address} is a platform admin; it signs in at POST /api/v1/admin/auth/verify`);
    return 0;
  });

export const token = (opts: DbOptions & { wallet: string }) =>
  withContext(opts, async (ctx, out) => {
    const issued = await adminTokenFor(ctx, opts.wallet);
    // The token alone, so that `export DRM_ADMIN_TOKEN=$(drm admin token --wallet …)` works.
    if (out.json) printJson(out, issued);
    else out.write(issued.token);
    return 0;
  });

export const revoke = (wallet: string, opts: DbOptions) =>
  withContext(opts, async (ctx, out) => {
    // Not an admin (or not an address) is an error: one line on stderr and a non-zero exit.
    const address = await revokeAdmin(ctx, wallet);
    if (out.json) printJson(out, { success: true, address });
    else out.write(`${address} is no longer a platform admin`);
    return 0;
  });

export const admins = (opts: DbOptions) =>
  withContext(opts, async (ctx, out) => {
    const rows = await ctx.repos.admins.list();
    const list = [
      ...rows.map((r) => ({ address: r.address, grantedAt: iso(r.grantedAt), source: 'database' })),
      ...ctx.config.adminWallets.map((address) => ({ address, grantedAt: null, source: 'DRM_ADMIN_WALLETS' })),
    ];
    if (out.json) printJson(out, { admins: list });
    else
      printTable(
        out,
        ['address', 'granted', 'source'],
        list.map((a) => [a.address, a.grantedAt, a.source]),
      );
    return 0;
  });

export const orgs = (opts: DbOptions & { page?: string; limit?: string }) =>
  withContext(opts, async (ctx, out) => {
    const page = paging(opts.page, opts.limit, 500);
    const rows = (await listOrganizations(ctx, page)).map((o) => adminOrganizationBody(o, ctx.config.apiShape));
    if (out.json) return printJson(out, { organizations: rows, page: page.page, limit: page.limit }), 0;
    printTable(
      out,
      ['id', 'name', 'plan', 'active', 'streams (month)', 'APUSD', 'keys', 'licenses'],
      rows.map((o) => [
        o.id,
        o.name,
        o.plan,
        o.isActive ? 'yes' : 'suspended',
        o.streamsThisMonth,
        o.apusdBalance,
        o.totalApiKeys,
        licenseCount(o),
      ]),
    );
    if (rows.length === 0) out.write('no organizations yet (they register at POST /api/v1/auth/register)');
    return 0;
  });

/** "3", or "3 (1 unmarked)" when licenses turn watermarking off. */
function licenseCount(o: { activeLicenses: number; licenses: Array<{ watermarkingEnabled: boolean }> }): string {
  const unmarked = o.licenses.filter((l) => !l.watermarkingEnabled).length;
  return unmarked === 0 ? String(o.activeLicenses) : `${o.activeLicenses} (${unmarked} unmarked)`;
}

export const license = (
  opts: DbOptions & { org: string; content: string; type: string; watermark?: boolean; price: string },
) =>
  withContext(opts, async (ctx, out) => {
    const row = await grantLicense(ctx, opts.org, {
      contentId: opts.content,
      contentType: opts.type,
      watermarkingEnabled: opts.watermark ?? true,
      pricePerStream: number(opts.price, '--price'),
    });
    if (out.json) printJson(out, { success: true, licenseId: row.id });
    else {
      const what = opts.content === '*' ? `all ${opts.type}` : opts.content;
      const marking = row.watermarkingEnabled ? 'watermarked per viewer' : 'unmarked (variant A for every viewer)';
      out.write(`license ${row.id}: organization ${opts.org} may stream ${what}, ${marking}`);
    }
    return 0;
  });

export const rateLimit = (opts: DbOptions & { org: string; key?: string; perHour?: string; monthlyStreams?: string }) =>
  withContext(opts, async (ctx, out) => {
    const change = readRateLimitChange({
      rateLimitPerHour: number(opts.perHour, '--per-hour'),
      monthlyStreamLimit: number(opts.monthlyStreams, '--monthly-streams'),
      keyId: opts.key,
    });
    await setRateLimit(ctx, opts.org, change);
    if (out.json) printJson(out, { success: true });
    else out.write(`limits set for ${opts.key ? `key ${opts.key}` : `organization ${opts.org}`}`);
    return 0;
  });

export const suspend = (opts: DbOptions & { org: string; reason: string }) =>
  withContext(opts, async (ctx, out) => {
    await suspendOrganization(ctx, opts.org, { reason: opts.reason });
    if (out.json) printJson(out, { success: true });
    else out.write(`organization ${opts.org} suspended; its keys are refused until drm admin reactivate`);
    return 0;
  });

export const reactivate = (opts: DbOptions & { org: string }) =>
  withContext(opts, async (ctx, out) => {
    await reactivateOrganization(ctx, opts.org);
    if (out.json) printJson(out, { success: true });
    else out.write(`organization ${opts.org} is active again`);
    return 0;
  });
