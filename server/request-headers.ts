import type { IncomingMessage } from 'node:http';
import type { Context as HonoContext } from 'hono';

/** What @hono/node-server hands the app as its env: the request as Node parsed it. */
export interface NodeBindings {
  incoming?: IncomingMessage;
}

/**
 * A request header by its lower-case name. Served by Node, it is read from the headers Node
 * already parsed: c.req.header() builds undici's Headers from them on first use, which cost more
 * than a keyed request's own database work (bench:middleware). Through app.request() (tests) it
 * is hono's. Node keeps the first of a repeated single-value header (Authorization,
 * Content-Length, User-Agent) and joins the others' values with ", ", as undici does.
 */
export function headerOf(c: HonoContext, name: string): string | undefined {
  const incoming = (c.env as NodeBindings | undefined)?.incoming;
  if (!incoming) return c.req.header(name);
  const value = incoming.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
