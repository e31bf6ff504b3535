import { badRequest } from '../errors.js';

/**
 * Small readers for request bodies and options: each names the field in its error so that the
 * caller gets a BAD_REQUEST that says what to fix, never a 500 from a wrong type.
 */
export type Fields = Record<string, unknown>;

export function asObject(body: unknown, what = 'request body'): Fields {
  // No body at all reads as an empty object; a body of `null` is a value, and not an object.
  if (body === undefined) return {};
  if (body === null) throw badRequest(`${what} must be a JSON object, not null`);
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest(`${what} must be a JSON object`);
  return body as Fields;
}

interface StringRule {
  max?: number;
  min?: number;
}

export function optionalString(f: Fields, key: string, rule: StringRule = {}): string | undefined {
  const v = f[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw badRequest(`${key} must be a string`);
  const max = rule.max ?? 1000;
  if (v.length > max) throw badRequest(`${key} must be at most ${max} characters`);
  if (rule.min !== undefined && v.trim().length < rule.min) {
    throw badRequest(rule.min <= 1 ? `${key} must not be empty` : `${key} must be at least ${rule.min} characters`);
  }
  return v;
}

export function requiredString(f: Fields, key: string, rule: StringRule = {}): string {
  const v = optionalString(f, key, { min: 1, ...rule });
  if (v === undefined) throw badRequest(`${key} is required`);
  return v;
}

export function optionalBoolean(f: Fields, key: string): boolean | undefined {
  const v = f[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw badRequest(`${key} must be true or false`);
  return v;
}

interface NumberRule {
  min?: number;
  max?: number;
  integer?: boolean;
}

export function optionalNumber(f: Fields, key: string, rule: NumberRule = {}): number | undefined {
  const v = f[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw badRequest(`${key} must be a number`);
  if (rule.integer && !Number.isInteger(v)) throw badRequest(`${key} must be a whole number`);
  if (rule.min !== undefined && v < rule.min) throw badRequest(`${key} must be at least ${rule.min}`);
  if (rule.max !== undefined && v > rule.max) throw badRequest(`${key} must be at most ${rule.max}`);
  return v;
}

export function oneOf<T extends string>(value: string | undefined, key: string, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw badRequest(`${key} must be one of ${allowed.join(', ')}`);
  return value as T;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: string) => UUID.test(v);

export function isEmail(v: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v);
}

/**
 * The last page any list serves: 10^6 pages of at most 500 rows keeps OFFSET a small exact
 * integer in SQL (a page of 1e21 would print as "1e+21" and break the statement), and a list
 * that long is searched with its filters, not paged through.
 */
export const MAX_PAGE = 1_000_000;

/** Paging for every list: bounded so that no request can ask for the whole table. */
/** A query value written as plain decimal digits, or NaN: Number() would also take 0x10, 1e3, +5 and 5.0. */
const wholeNumber = (v: unknown): number => (typeof v === 'string' && /^[0-9]{1,16}$/.test(v) ? Number(v) : Number.NaN);

export function paging(page: unknown, limit: unknown, maxLimit = 100): { page: number; limit: number; offset: number } {
  const p = page === undefined ? 1 : wholeNumber(page);
  const l = limit === undefined ? 50 : wholeNumber(limit);
  if (!Number.isSafeInteger(p) || p < 1 || p > MAX_PAGE)
    throw badRequest(`page must be a whole number from 1 to ${MAX_PAGE}`);
  if (!Number.isSafeInteger(l) || l < 1 || l > maxLimit)
    throw badRequest(`limit must be a whole number from 1 to ${maxLimit}`);
  return { page: p, limit: l, offset: (p - 1) * l };
}
