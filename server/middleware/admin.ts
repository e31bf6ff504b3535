import type { MiddlewareHandler } from 'hono';
import type { Context } from '../../src/context.js';
import { authenticateAdmin } from '../../src/domain/admin/sign-in.js';
import type { AppEnv } from '../env.js';
import { bearer } from '../origin.js';

/** Admin endpoints: a SIWE sign-in token of a wallet that is still granted. */
export function requireAdmin(ctx: Context): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('admin', await authenticateAdmin(ctx, bearer(c)));
    await next();
  };
}
