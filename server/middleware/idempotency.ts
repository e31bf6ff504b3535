import type { Context as HonoContext, MiddlewareHandler } from 'hono';
import type { Context } from '../../src/context.js';
import { claimKey, requestHash, settleKey } from '../../src/domain/billing/idempotency.js';
import { readText } from '../body.js';
import type { AppEnv } from '../env.js';
import { headerOf } from '../request-headers.js';

/**
 * Idempotency-Key on a request that moves money (after the key or admin check): the first
 * request with a key runs and its success is kept 24 h; a retry with the same body gets that
 * answer again (Idempotent-Replayed: true) and moves nothing. `organizationOf` names whose keys
 * these are: the key's organization, or the organization an admin acts on.
 */
export function idempotent(
  ctx: Context,
  organizationOf: (c: HonoContext<AppEnv>) => string,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = headerOf(c, 'idempotency-key');
    if (key === undefined) return next();
    const body = await readText(c, ctx.config.maxJsonBytes);
    const organizationId = organizationOf(c);
    const claim = await claimKey(ctx, organizationId, key, requestHash(c.req.method, c.req.path, body));
    if (claim.replay) {
      const headers = { 'content-type': 'application/json', 'idempotent-replayed': 'true' };
      return c.body(claim.body, claim.statusCode as 200, headers);
    }
    try {
      await next();
    } catch (err) {
      await settleKey(ctx, organizationId, key, 500, '');
      throw err;
    }
    await settleKey(ctx, organizationId, key, c.res.status, await c.res.clone().text());
  };
}

/** The organization of the request's API key. */
export const keyOrganization = (c: HonoContext<AppEnv>): string => c.get('auth').org.id;
