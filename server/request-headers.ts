import type { IncomingMessage } from 'node:http';
import type { Context as HonoContext } from 'hono';

/** What @hono/node-server hands the app as its env: the request as Node parsed it. */
export interface NodeBindings {
  incoming?: IncomingMessage;
}

/** Headers Node keeps only the first of when repeated, which undici (and so hono) would join. */
const FIRST_ONLY = new Set(['authorization', 'user-agent']);

/**
 * A request header by its lower-case name. Served by Node, it is read from the headers Node
 * already parsed: c.req.header() builds undici's Headers from them on first use, which cost more
 * than a keyed request's own database work (bench:middleware). Through app.request() (tests) it
 * is hono's. Repeated, a header's values are joined with ", " as undici joins them, also where
 * Node keeps the first: two Authorization headers are one value no key matches, never the first
 * key alone.
 */
export function headerOf(c: HonoContext, name: string): string | undefined {
  const incoming = (c.env as NodeBindings | undefined)?.incoming;
  if (!incoming) return c.req.header(name);
  const value = incoming.headers[name];
  if (Array.isArray(value)) return value.join(', ');
  return value !== undefined && FIRST_ONLY.has(name) ? everyValue(incoming.rawHeaders, name) : value;
}

/** Every value of a header in the raw list (name, value, name, value, …), joined. */
function everyValue(raw: string[], name: string): string {
  const values: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i] as string;
    if (key.length === name.length && key.toLowerCase() === name) values.push(raw[i + 1] as string);
  }
  return values.join(', ');
}
