import type { Context as HonoContext } from 'hono';
import type { Context } from '../src/context.js';
import { headerOf } from './request-headers.js';

/** The address clients reach this server at: --public-url when set, else the request's own origin. */
export function baseUrl(c: HonoContext, ctx: Context): string {
  if (ctx.config.publicUrl) return ctx.config.publicUrl.replace(/\/+$/, '');
  return new URL(c.req.url).origin;
}

/** The host a SIWE message must name. */
export function expectedHost(c: HonoContext, ctx: Context): string {
  return new URL(ctx.config.publicUrl ?? c.req.url).host;
}

export function bearer(c: HonoContext): string | undefined {
  const h = headerOf(c, 'authorization');
  const m = h ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m?.[1];
}
