import { createHash } from 'node:crypto';
import { HOUR_MS } from '../../clock.js';
import type { Context } from '../../context.js';
import { badRequest, DrmError } from '../../errors.js';

/** How long an answered key is kept: a retry within it gets the first answer. */
export const IDEMPOTENCY_KEPT_MS = 24 * HOUR_MS;
const KEY = /^[\x21-\x7e]{1,255}$/;

export type Claim = { replay: false } | { replay: true; statusCode: number; body: string };

/** The request a key stands for: method, path and body, so that another body under the same key is seen. */
export function requestHash(method: string, path: string, body: string): string {
  return createHash('sha256').update(`${method} ${path}\n${body}`).digest('hex');
}

/**
 * Claims an Idempotency-Key for one organization's request, the way the card processor does it:
 * a new key runs the request; a key answered before with the same request gets that answer again;
 * the same key with another request is IDEMPOTENCY_KEY_REUSED, and a key whose first request is
 * still running is a CONFLICT to retry. Keys are kept 24 h; after that the key is new again.
 */
export async function claimKey(ctx: Context, organizationId: string, key: string, hash: string): Promise<Claim> {
  if (!KEY.test(key)) throw badRequest('Idempotency-Key must be 1 to 255 visible ASCII characters');
  const repo = ctx.repos.idempotency;
  const now = ctx.clock.now();
  if (await repo.claim(organizationId, key, hash, now)) return { replay: false };
  const held = await repo.find(organizationId, key);
  if (!held) return claimKey(ctx, organizationId, key, hash);
  if (
    held.createdAt < now - IDEMPOTENCY_KEPT_MS &&
    (await repo.reclaim(organizationId, key, hash, now, now - IDEMPOTENCY_KEPT_MS))
  ) {
    return { replay: false };
  }
  if (held.requestHash !== hash) {
    throw new DrmError(
      'IDEMPOTENCY_KEY_REUSED',
      'this Idempotency-Key was used for another request in the last 24 hours; use a new key',
    );
  }
  if (held.statusCode === null || held.responseBody === null) {
    throw new DrmError('CONFLICT', 'a request with this Idempotency-Key is still being answered; retry it in a moment');
  }
  return { replay: true, statusCode: held.statusCode, body: held.responseBody };
}

/**
 * After the request: a success is kept as the key's answer; anything else lets the key go, so
 * the client may retry with it (a refusal moved no money, and a failure may not have either).
 */
export async function settleKey(ctx: Context, organizationId: string, key: string, statusCode: number, body: string) {
  if (statusCode >= 200 && statusCode < 300) await ctx.repos.idempotency.answer(organizationId, key, statusCode, body);
  else await ctx.repos.idempotency.release(organizationId, key);
}
