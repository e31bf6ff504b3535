import type { Context as HonoContext } from 'hono';
import type { Context } from '../src/context.js';
import type { ClientInfo } from '../src/domain/streaming.js';
import { headerOf, type NodeBindings } from './request-headers.js';

/**
 * The client's address and user agent. Behind a reverse proxy (--trust-proxy) the address is the
 * first of X-Forwarded-For; otherwise the socket's, never a header a client could forge.
 */
export function clientInfo(c: HonoContext, ctx: Context): ClientInfo {
  const userAgent = headerOf(c, 'user-agent') ?? null;
  if (ctx.config.trustProxy) {
    const first = headerOf(c, 'x-forwarded-for')?.split(',')[0]?.trim();
    if (first) return { ip: first, userAgent };
  }
  const incoming = (c.env as NodeBindings | undefined)?.incoming;
  const ip = incoming?.socket?.remoteAddress ?? null;
  return { ip: ip?.startsWith('::ffff:') ? ip.slice(7) : ip, userAgent };
}
