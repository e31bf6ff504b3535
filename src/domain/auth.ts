import type { Context } from '../context.js';
import { hashApiKey, looksLikeApiKey, safeEqual } from '../crypto/tokens.js';
import type { ApiKeyRow, OrganizationRow } from '../db/repos/index.js';
import { DrmError } from '../errors.js';
import type { Scope } from './scopes.js';

export interface KeyAuth {
  key: ApiKeyRow;
  org: OrganizationRow;
}

const invalid = () => new DrmError('INVALID_API_KEY', 'API key is missing, invalid or revoked');

/**
 * Resolves a bearer API key to its key and organization, refusing missing and revoked keys. A
 * suspended organization's key still resolves here, so that the edge can count the request and
 * send the rate-limit headers before refusing it with requireActiveOrganization.
 */
export async function authenticateApiKey(ctx: Context, presented: string | undefined): Promise<KeyAuth> {
  if (!presented || !looksLikeApiKey(presented)) throw invalid();
  const hash = hashApiKey(presented);
  const found = await ctx.repos.apiKeys.findByHash(hash);
  // The index lookup finds the row; the constant-time comparison is the check that counts.
  if (!found || !safeEqual(found.key.keyHash, hash) || found.key.revokedAt !== null) throw invalid();
  return found;
}

export function requireActiveOrganization(auth: KeyAuth): void {
  if (auth.org.isActive) return;
  const reason = auth.org.suspendedReason ? `: ${auth.org.suspendedReason}` : '';
  throw new DrmError('ORGANIZATION_SUSPENDED', `organization is suspended${reason}`);
}

export function requireScope(auth: KeyAuth, scope: Scope | 'any'): void {
  if (scope === 'any') return;
  if (!auth.key.scopes.includes(scope)) {
    throw new DrmError('INSUFFICIENT_SCOPE', `this endpoint needs an API key with the ${scope} scope`);
  }
}
