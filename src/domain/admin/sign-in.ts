// jose and viem are loaded by the first sign-in or admin request, not by every command that imports this
import type { Context } from '../../context.js';
import { iso } from '../../clock.js';
import { badRequest, DrmError } from '../../errors.js';
import { addNonceWithinBound } from '../open-limits.js';
import { asObject, requiredString } from '../validate.js';

export const NONCE_TTL_MS = 10 * 60_000;
export const ADMIN_TOKEN_TTL_MS = 12 * 3_600_000;
const ADMIN_TOKEN_CLOCK_SKEW_S = 60;
/** How far ahead of the server's clock a message's Issued At may be (wallet clocks drift). */
export const ISSUED_AT_SKEW_MS = 5 * 60_000;
const ISSUER = 'drm';
const AUDIENCE = 'drm-admin';

const signInFailed = (why: string) => new DrmError('INVALID_ADMIN_TOKEN', `sign-in failed: ${why}`);

/** GET /admin/auth/nonce: a single-use nonce for one SIWE message, valid for 10 minutes. */
export async function issueNonce(ctx: Context): Promise<{ nonce: string; expiresAt: string }> {
  const { generateSiweNonce } = await import('viem/siwe');
  const nonce = generateSiweNonce();
  const expiresAt = ctx.clock.now() + NONCE_TTL_MS;
  await addNonceWithinBound(ctx, nonce, expiresAt);
  return { nonce, expiresAt: iso(expiresAt) };
}

export async function isAdminWallet(ctx: Context, address: string): Promise<boolean> {
  const a = address.toLowerCase();
  return ctx.config.adminWallets.includes(a) || (await ctx.repos.admins.isGranted(a));
}

/**
 * POST /admin/auth/verify: checks an EIP-4361 message and its signature and returns a 12-hour
 * admin token. `expectedHost` is the host the server was reached at (or --public-url's host).
 * The nonce is consumed only after the signature holds, and only once.
 */
export async function verifySignIn(
  ctx: Context,
  body: unknown,
  expectedHost: string,
): Promise<{ token: string; address: string; expiresAt: string }> {
  const f = asObject(body);
  const message = requiredString(f, 'message', { max: 4000 });
  const signature = requiredString(f, 'signature', { max: 200 });
  if (!/^0x[0-9a-fA-F]+$/.test(signature)) throw badRequest('signature must be a 0x-prefixed hex string');

  const [{ getAddress, verifyMessage }, { parseSiweMessage }] = await Promise.all([
    import('viem'),
    import('viem/siwe'),
  ]);
  const fields = parseSiweMessage(message);
  // EIP-4361 requires Issued At (viem's parser insists too): the check on it below must not be
  // skippable by leaving it out.
  if (
    !fields.address ||
    !fields.domain ||
    !fields.nonce ||
    !fields.uri ||
    !fields.version ||
    !fields.chainId ||
    !fields.issuedAt
  ) {
    throw badRequest('message is not an EIP-4361 sign-in message');
  }
  if (fields.domain !== expectedHost) throw signInFailed(`message is for ${fields.domain}, not ${expectedHost}`);
  const now = ctx.clock.now();
  // viem turns an unparseable time into an Invalid Date, which no comparison would catch.
  for (const [name, date] of [
    ['Expiration Time', fields.expirationTime],
    ['Not Before', fields.notBefore],
    ['Issued At', fields.issuedAt],
  ] as const) {
    if (date !== undefined && !Number.isFinite(date.getTime())) throw badRequest(`message has an invalid ${name}`);
  }
  if (fields.expirationTime && fields.expirationTime.getTime() <= now) throw signInFailed('message has expired');
  if (fields.notBefore && fields.notBefore.getTime() > now) throw signInFailed('message is not valid yet');
  // A message dated ahead is one made to be used later (by whoever holds it then).
  if (fields.issuedAt && fields.issuedAt.getTime() > now + ISSUED_AT_SKEW_MS)
    throw signInFailed('message is issued in the future');

  let valid = false;
  try {
    valid = await verifyMessage({ address: fields.address, message, signature: signature as `0x${string}` });
  } catch {
    valid = false;
  }
  if (!valid) throw signInFailed('signature does not match the address');
  if (!(await ctx.repos.admins.consumeNonce(fields.nonce, now)))
    throw signInFailed('nonce is unknown, used or expired');
  const address = getAddress(fields.address);
  if (!(await isAdminWallet(ctx, address))) {
    throw new DrmError('ADMIN_REQUIRED', `wallet ${address} is not a platform admin (grant it with drm admin grant)`);
  }

  return issueAdminToken(ctx, address);
}

/**
 * A sign-in token for a wallet that is an admin: what a SIWE sign-in ends with, and what an
 * operator with the deployment's secret makes with `drm admin token` for tools such as drm top.
 */
export async function issueAdminToken(
  ctx: Context,
  address: string,
): Promise<{ token: string; address: string; expiresAt: string }> {
  const now = ctx.clock.now();
  const expiresAt = now + ADMIN_TOKEN_TTL_MS;
  const { SignJWT } = await import('jose');
  const token = await new SignJWT({ role: 'admin' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(address.toLowerCase())
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(Math.floor(expiresAt / 1000))
    .sign(ctx.keys.adminToken);
  return { token, address, expiresAt: iso(expiresAt) };
}

/**
 * jose accepts a token without exp, with any lifetime, and with an iat in the future: a token
 * signed with a leaked secret, or by a future bug, must not become a key that never expires (an
 * iat a year ahead with exp an hour after it would work for a year). Our servers' clocks may
 * differ by a few seconds, so an iat up to a minute ahead is taken.
 */
function hasBoundedLifetime(payload: { iat?: unknown; exp?: unknown }, now: number): boolean {
  const { iat, exp } = payload;
  if (typeof iat !== 'number' || typeof exp !== 'number') return false;
  return iat <= now / 1000 + ADMIN_TOKEN_CLOCK_SKEW_S && exp - iat <= ADMIN_TOKEN_TTL_MS / 1000;
}

/** The admin behind a bearer token; the wallet must still be granted (revoking takes effect at once). */
export async function authenticateAdmin(ctx: Context, token: string | undefined): Promise<{ address: string }> {
  if (!token) throw new DrmError('INVALID_ADMIN_TOKEN', 'admin endpoints need a sign-in token (Authorization: Bearer)');
  let address: string;
  try {
    const { jwtVerify } = await import('jose');
    const { payload } = await jwtVerify(token, ctx.keys.adminToken, {
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: new Date(ctx.clock.now()),
    });
    if (payload.role !== 'admin' || typeof payload.sub !== 'string') throw new Error('not an admin token');
    if (!hasBoundedLifetime(payload, ctx.clock.now())) throw new Error('admin token without a bounded lifetime');
    address = payload.sub;
  } catch {
    throw new DrmError('INVALID_ADMIN_TOKEN', 'admin token is invalid or expired');
  }
  if (!(await isAdminWallet(ctx, address)))
    throw new DrmError('ADMIN_REQUIRED', 'this wallet is no longer a platform admin');
  return { address };
}
