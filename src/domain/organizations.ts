import type { Context } from '../context.js';
import { seal } from '../crypto/sealed.js';
import {
  API_KEY_DISPLAY_PREFIX_LENGTH,
  generateApiKey,
  generateWebhookSecret,
  hashApiKey,
  newId,
} from '../crypto/tokens.js';
import { isEvmAddress, ORGANIZATION_WALLETS } from '../crypto/wallets.js';
import type { OrganizationRow } from '../db/repos/index.js';
import { badRequest, DrmError } from '../errors.js';
import { HOUR_MS, iso } from '../clock.js';
import { type PlanCode, PLAN_CODES, SELF_SERVICE_PLANS } from './plans.js';
import { isScope, SCOPES, type Scope } from './scopes.js';
import { parseSigningKey } from './signing-keys.js';
import { asObject, type Fields, isEmail, oneOf, optionalString, requiredString } from './validate.js';
import { checkWebhookUrl } from './webhooks/url-policy.js';

export interface Registration {
  organization: OrganizationRow;
  apiKey: string;
  apiKeyId: string;
  webhookSecret: string;
  scopes: Scope[];
}

function readScopes(f: Fields): Scope[] {
  const v = f.scopes;
  if (v === undefined || v === null) return [...SCOPES];
  if (!Array.isArray(v) || v.length === 0 || !v.every(isScope)) {
    throw badRequest(`scopes must be a non-empty array of ${SCOPES.join(', ')}`);
  }
  return [...new Set(v)];
}

/** POST /auth/register: the organization, its first key (shown once) and its webhook secret, in one transaction. */
export async function registerOrganization(ctx: Context, body: unknown, defaultPlan: PlanCode): Promise<Registration> {
  const f = asObject(body);
  const name = requiredString(f, 'name', { max: 200 });
  const email = optionalString(f, 'email', { max: 320 });
  if (email !== undefined && !isEmail(email)) throw badRequest('email must be an email address');
  const walletAddress = optionalString(f, 'walletAddress', { max: 64 });
  if (walletAddress !== undefined && !isEvmAddress(walletAddress))
    throw badRequest('walletAddress must be an EVM address');
  const signingAlgorithm =
    oneOf(optionalString(f, 'signingAlgorithm'), 'signingAlgorithm', ['RS256', 'ES256']) ?? 'RS256';
  const signingPublicKey = optionalString(f, 'signingPublicKey', { max: 20_000 });
  if (signingPublicKey !== undefined) await parseSigningKey(signingPublicKey, signingAlgorithm);
  const rawWebhookUrl = optionalString(f, 'webhookUrl', { max: 2000 });
  // Stored normalised, as PUT /webhook stores it, so both paths keep the same form.
  const webhookUrl =
    rawWebhookUrl === undefined
      ? undefined
      : (await checkWebhookUrl(rawWebhookUrl, ctx.config.allowPrivateWebhooks)).toString();
  const plan = oneOf(optionalString(f, 'plan'), 'plan', PLAN_CODES) ?? defaultPlan;
  if (!SELF_SERVICE_PLANS.includes(plan)) {
    throw badRequest(`plan ${plan} is assigned by a platform admin; register with paid or professional`);
  }
  const scopes = readScopes(f);

  const apiKey = generateApiKey();
  const webhookSecret = generateWebhookSecret();
  const now = ctx.clock.now();
  const deriveAddress = await ctx.wallets.deriver();
  return ctx.db.transaction(async (tx) => {
    const walletIndex = walletAddress ? null : await tx.repos.organizations.nextWalletIndex();
    const organization: OrganizationRow = {
      id: newId(),
      name: name.trim(),
      email: email ?? null,
      walletAddress: walletAddress ?? deriveAddress(ORGANIZATION_WALLETS, walletIndex as number),
      walletIndex,
      signingPublicKey: signingPublicKey ?? null,
      signingAlgorithm,
      webhookUrl: webhookUrl ?? null,
      webhookSecretSealed: seal(ctx.keys.seal, webhookSecret),
      plan,
      isActive: true,
      suspendedReason: null,
      suspendedAt: null,
      apusdBalanceMicro: 0,
      rateLimitPerHour: null,
      monthlyStreamLimit: null,
      lastRotationAt: null,
      createdAt: now,
      autopayEnabled: false,
      autopayMethod: null,
      fiatCustomerId: null,
      billingTerms: null,
      watermarkPassUntil: null,
      depositAddress: null,
      negativeSince: null,
    };
    // A wallet the service made is the organization's deposit address; one of its own never is
    // (transfers to it are the organization's business): that one gets a derived address when it first funds.
    if (walletIndex !== null) organization.depositAddress = organization.walletAddress.toLowerCase();
    await tx.repos.organizations.insert(organization);
    const apiKeyId = newId();
    await tx.repos.apiKeys.insert({
      id: apiKeyId,
      organizationId: organization.id,
      name: 'default',
      prefix: apiKey.slice(0, API_KEY_DISPLAY_PREFIX_LENGTH),
      keyHash: hashApiKey(apiKey),
      scopes,
      rateLimitPerHour: null,
      revokedAt: null,
      createdAt: now,
    });
    return { organization, apiKey, apiKeyId, webhookSecret, scopes };
  });
}

export const ROTATION_COOLDOWN_MS = HOUR_MS;

/**
 * POST /auth/rotate: a new key with the same name, scopes and limit; the old one is revoked in the same transaction.
 */
export async function rotateApiKey(ctx: Context, keyId: string): Promise<{ apiKey: string; apiKeyId: string }> {
  const now = ctx.clock.now();
  return ctx.db.transaction(async (tx) => {
    const old = await tx.repos.apiKeys.find(keyId);
    const org = old && (await tx.repos.organizations.find(old.organizationId));
    if (!old || !org) throw new DrmError('INVALID_API_KEY', 'API key is missing, invalid or revoked');
    if (org.lastRotationAt !== null && now - org.lastRotationAt < ROTATION_COOLDOWN_MS) {
      const retryAfter = Math.ceil((org.lastRotationAt + ROTATION_COOLDOWN_MS - now) / 1000);
      throw new DrmError(
        'ROTATION_COOLDOWN',
        `keys can be rotated once an hour; try again after ${iso(org.lastRotationAt + ROTATION_COOLDOWN_MS)}`,
        { headers: { 'Retry-After': String(retryAfter) } },
      );
    }
    // Revoking with a condition makes two simultaneous rotations of one key produce one new key.
    if (!(await tx.repos.apiKeys.revoke(old.id, now))) {
      throw new DrmError('INVALID_API_KEY', 'API key is missing, invalid or revoked');
    }
    const apiKey = generateApiKey();
    const apiKeyId = newId();
    await tx.repos.apiKeys.insert({
      ...old,
      id: apiKeyId,
      prefix: apiKey.slice(0, API_KEY_DISPLAY_PREFIX_LENGTH),
      keyHash: hashApiKey(apiKey),
      revokedAt: null,
      createdAt: now,
    });
    await tx.repos.organizations.update(org.id, { lastRotationAt: now });
    return { apiKey, apiKeyId };
  });
}
