import type { Context as HonoContext } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppEnv } from './env.js';

/**
 * The headers every answer to a request carries: its X-Request-Id (the edge) and, on a keyed or
 * limited request, the X-RateLimit headers (the key's middleware), kept as a plain record until
 * the answer is made. hono's c.header() keeps them in undici's Headers, which Node then has to
 * read back into a record; made in one step with the body (reply), they reach Node as they are.
 */
export function answerHeaders(c: HonoContext<AppEnv>): Record<string, string> {
  let headers = c.get('answerHeaders');
  if (!headers) {
    headers = {};
    c.set('answerHeaders', headers);
  }
  return headers;
}

/**
 * A JSON answer with the request's headers (answerHeaders) and any of its own. The edge adds
 * those headers afterwards to an answer made any other way (a redirect, hono's own), by making
 * it again; a streamed file or a playlist takes them when it is made. Headers set with hono's
 * c.header() before it, and c.status(), are not carried: a JSON answer is made here alone.
 */
export function reply(
  c: HonoContext<AppEnv>,
  body: unknown,
  status: ContentfulStatusCode = 200,
  headers?: Record<string, string>,
): Response {
  return replyJsonText(c, JSON.stringify(body), status, headers);
}

/** A JSON body's UTF-8 bytes. */
type JsonBytes = Uint8Array<ArrayBuffer>;

/** reply() with its body in JSON already: text, or its UTF-8 bytes (sharedJson). */
export function replyJsonText(
  c: HonoContext<AppEnv>,
  json: string | JsonBytes,
  status: ContentfulStatusCode = 200,
  headers?: Record<string, string>,
): Response {
  const res = new Response(json, {
    status,
    headers: { 'content-type': 'application/json', ...c.get('answerHeaders'), ...headers },
  });
  c.set('replied', res);
  return res;
}

/**
 * A body's JSON made once for every request answered from the same object: the requests of one
 * event-loop turn that asked for the same rows share one query and its result (src/db/per-turn.ts),
 * and so can share the bytes made from it. `variant` names what else the body is made of (the
 * page, the base URL). Kept only as long as the shared object lives. Bytes, not text: Node would
 * otherwise encode the same text to UTF-8 again for every answer.
 */
export function sharedJson<K extends object>(): (shared: K, variant: string, body: () => unknown) => JsonBytes {
  const made = new WeakMap<K, Map<string, JsonBytes>>();
  return (shared, variant, body) => {
    let texts = made.get(shared);
    if (!texts) {
      texts = new Map();
      made.set(shared, texts);
    }
    let text = texts.get(variant);
    if (text === undefined) {
      text = Buffer.from(JSON.stringify(body()));
      texts.set(variant, text);
    }
    return text;
  };
}

/** Adds the request's headers to an answer that reply() did not make (where it lacks them). */
export function completeAnswer(c: HonoContext<AppEnv>): void {
  const headers = c.get('answerHeaders');
  if (headers && c.get('replied') !== c.res) addToAnswer(c, headers);
}

/**
 * Adds headers an answer lacks by making it again with them. Changing the answer's headers in
 * place is not enough: @hono/node-server's Response keeps the record it was made with, and
 * hono's answer to a HEAD request is made from that record.
 */
export function addToAnswer(c: HonoContext<AppEnv>, headers: Record<string, string>): void {
  const res = c.res;
  const missing = Object.keys(headers).filter((name) => !res.headers.has(name));
  if (missing.length === 0) return;
  const all = new Headers(res.headers);
  for (const name of missing) all.set(name, headers[name] as string);
  // Unset first: hono's setter would otherwise copy the old answer's headers onto the new one.
  c.res = undefined;
  c.res = new Response(res.body, { status: res.status, statusText: res.statusText, headers: all });
}
