import type { Context as HonoContext } from 'hono';
import type { Context } from '../src/context.js';
import { headerOf } from './request-headers.js';

/** The address clients reach this server at: --public-url when set, else the request's own origin. */
export function baseUrl(c: HonoContext, ctx: Context): string {
  if (ctx.config.publicUrl) return ctx.config.publicUrl.replace(/\/+$/, '');
  return originOf(c.req.url);
}

/**
 * The origin of the request's URL, which reaches the app parsed and written out again
 * (scheme://host[:port]/path…, by @hono/node-server or by the Request of app.request()), so it
 * ends where the path begins; no new URL parsed on every catalog page.
 */
function originOf(url: string): string {
  const path = url.indexOf('/', url.indexOf('//') + 2);
  const origin = path === -1 ? '' : url.slice(0, path);
  // An absolute request target may carry user info (http://user@host/…), which an origin drops.
  return origin === '' || origin.includes('@') ? new URL(url).origin : origin;
}

/** The host a SIWE message must name. */
export function expectedHost(c: HonoContext, ctx: Context): string {
  return new URL(ctx.config.publicUrl ?? c.req.url).host;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function bearer(c: HonoContext): string | undefined {
  const h = headerOf(c, 'authorization');
  return h ? BEARER.exec(h)?.[1] : undefined;
}
