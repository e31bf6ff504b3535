import { hash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const API_KEY_PREFIX = 'drm_live_';
const API_KEY_RANDOM_CHARS = 40;
export const API_KEY_DISPLAY_PREFIX_LENGTH = 12;

/** Uniform base62 characters by rejection sampling (no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBase62(API_KEY_RANDOM_CHARS);
}

/**
 * Keys carry 238 bits of entropy, so a plain SHA-256 is as strong as a slow hash here. One call
 * (crypto.hash), not a Hash object: this runs on every keyed request.
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function looksLikeApiKey(key: string): boolean {
  return key.startsWith(API_KEY_PREFIX) && key.length >= API_KEY_PREFIX.length + 32 && /^[A-Za-z0-9_]+$/.test(key);
}

export function generateWebhookSecret(): string {
  return randomBytes(32).toString('hex');
}

export const newId = () => randomUUID();

/** Constant-time equality for secrets of any length (length itself is not secret here). */
export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ba.length !== bb.length) return false;
  return timingSafeEqual(ba, bb);
}
