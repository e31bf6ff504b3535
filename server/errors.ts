import type { Context as HonoContext } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { asDrmError, badRequest, DrmError } from '../src/errors.js';
import { errorFields, type Logger } from '../src/log.js';
import type { AppEnv } from './env.js';
import { reply } from './reply.js';

/** The spec's error body, {error, code, status}, with the error's own headers (Retry-After, rate limits). */
export function errorResponse(c: HonoContext<AppEnv>, err: DrmError): Response {
  const body = { error: err.message, code: err.code, status: err.status };
  return reply(c, body, err.status as ContentfulStatusCode, err.headers);
}

/**
 * Node's error for a request whose connection closed before its body was read to the end: the
 * client went away, or its body was malformed and answered already (client-error.ts). The client's
 * doing, so no INTERNAL_ERROR in the log; nobody is left to read the answer.
 */
const bodyCutOff = (err: Error & { code?: string }) => err.code === 'ECONNRESET' && err.message === 'aborted';

/** The single onError: known errors as they are, anything else as INTERNAL_ERROR with the detail only in the log. */
export function onError(log: Logger) {
  return (err: Error, c: HonoContext<AppEnv>) => {
    const e = bodyCutOff(err) ? badRequest('the request body was cut off') : asDrmError(err);
    if (e.code === 'INTERNAL_ERROR') {
      log.error('request failed', { method: c.req.method, path: c.req.path, ...errorFields(err) });
    }
    return errorResponse(c, e);
  };
}

export function onNotFound(c: HonoContext<AppEnv>): Response {
  return errorResponse(c, new DrmError('NOT_FOUND', `no route for ${c.req.method} ${c.req.path}`));
}
