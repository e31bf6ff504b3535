import type { MiddlewareHandler } from 'hono';
import type { Context } from '../../src/context.js';
import { authenticateApiKey, requireActiveOrganization, requireScope } from '../../src/domain/auth.js';
import { countRequest, setRateHeaders } from '../../src/domain/rate-limits.js';
import type { Scope } from '../../src/domain/scopes.js';
import type { AppEnv } from '../env.js';
import { bearer } from '../origin.js';
import { answerHeaders } from '../reply.js';

/**
 * Bearer API key → key and organization, counted against the rate limits (so every keyed
 * response, errors included, carries the X-RateLimit headers), then the suspension and scope checks.
 */
export function requireKey(
  ctx: Context,
  scope: Scope | 'any',
  options: { suspendedMay?: boolean } = {},
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const auth = await authenticateApiKey(ctx, bearer(c));
    const rate = await countRequest(ctx, auth);
    setRateHeaders(answerHeaders(c), rate);
    // A suspended organization may still see what it owes and pay it (billing's reads and payments).
    if (!options.suspendedMay) requireActiveOrganization(auth);
    requireScope(auth, scope);
    c.set('auth', auth);
    c.set('rate', rate);
    await next();
  };
}
