import type { Context as HonoContext } from 'hono';
import { badRequest, DrmError } from '../src/errors.js';
import { headerOf } from './request-headers.js';

const tooLarge = (max: number) =>
  new DrmError('PAYLOAD_TOO_LARGE', `request body is larger than ${Math.round(max / 1024)} KiB`);

/** The refusal of a declared Content-Length over the limit, made before anything is read. */
export function declaredTooLarge(c: HonoContext, max: number): DrmError | undefined {
  const declared = Number(headerOf(c, 'content-length') ?? 0);
  return declared > max ? tooLarge(max) : undefined;
}

/**
 * Reads a JSON body of at most `max` bytes (counted as it streams, for bodies without a length).
 * An empty body reads as undefined; anything that is not JSON is a BAD_REQUEST.
 */
export async function readJson(c: HonoContext, max: number): Promise<unknown> {
  const text = await readText(c, max);
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('request body is not valid JSON');
  }
}

/**
 * The body as text, at most `max` bytes; read once and kept on the request, so middleware that
 * needs the bytes (an idempotency key's request hash) and the handler after it both have them.
 */
export async function readText(c: HonoContext, max: number): Promise<string> {
  const kept = c.get('bodyText') as string | undefined;
  if (kept !== undefined) return kept;
  const stream = c.req.raw.body;
  if (!stream) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw tooLarge(max);
    }
    chunks.push(value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  c.set('bodyText', text);
  return text;
}
