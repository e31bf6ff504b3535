import type { Scope } from '../../src/domain/scopes.js';

/**
 * The few OpenAPI 3.1 objects this service's document uses, and the helpers that keep every
 * operation's security, error responses and rate-limit headers the same: an endpoint is described
 * in one call that says who may call it, and the helper adds what follows from that.
 */

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1), kept loose: the document is data. */
export type Schema = Record<string, unknown>;

export interface MediaType {
  schema: Schema;
  example?: unknown;
}

export interface Response {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaType>;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  description?: string;
  schema: Schema;
}

export interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; description?: string; content: Record<string, MediaType> };
  responses: Record<string, Response | { $ref: string }>;
}

export type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** One documented route: the path in OpenAPI's `{name}` form. */
export interface Endpoint {
  method: Method;
  path: string;
  operation: Operation;
}

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });

export const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
export const str = (description?: string, extra: Schema = {}): Schema => ({
  type: 'string',
  ...(description && { description }),
  ...extra,
});
export const int = (description?: string, extra: Schema = {}): Schema => ({
  type: 'integer',
  ...(description && { description }),
  ...extra,
});
export const num = (description?: string, extra: Schema = {}): Schema => ({
  type: 'number',
  ...(description && { description }),
  ...extra,
});
export const bool = (description?: string): Schema => ({ type: 'boolean', ...(description && { description }) });
export const uuid = (description?: string): Schema => str(description, { format: 'uuid' });
export const time = (description?: string): Schema => str(description, { format: 'date-time' });
export const arrayOf = (items: Schema, description?: string): Schema => ({
  type: 'array',
  items,
  ...(description && { description }),
});

/** An object whose every listed property is always sent unless named in `optional`. */
export function object(properties: Record<string, Schema>, optional: string[] = [], description?: string): Schema {
  const required = Object.keys(properties).filter((k) => !optional.includes(k));
  return { type: 'object', ...(description && { description }), properties, ...(required.length > 0 && { required }) };
}

export const json = (schema: Schema, example?: unknown): Record<string, MediaType> => ({
  'application/json': { schema, ...(example !== undefined && { example }) },
});

export const jsonResponse = (description: string, schema: Schema): Response => ({ description, content: json(schema) });

/** A JSON request body; `example` is sent as it is by the drift test (test/api/openapi-drift.test.ts). */
export const jsonBody = (schema: Schema, example: unknown, required = true) => ({
  required,
  content: json(schema, example),
});

export const pathParam = (name: string, description: string, schema: Schema = { type: 'string' }): Parameter => ({
  name,
  in: 'path',
  required: true,
  description,
  schema,
});
export const queryParam = (name: string, description: string, schema: Schema, required = false): Parameter => ({
  name,
  in: 'query',
  required,
  description,
  schema,
});

/** Page and limit of every list (src/domain/validate.ts `paging`); the maximum limit differs per list. */
export const pagingParams = (maxLimit: number): Parameter[] => [
  queryParam('page', 'page number, from 1', { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1 }),
  queryParam('limit', `rows per page, at most ${maxLimit}`, {
    type: 'integer',
    minimum: 1,
    maximum: maxLimit,
    default: 50,
  }),
];

/** What every endpoint may answer besides its own outcomes; a body may also be too large. */
function commonErrors(spec: Spec) {
  return {
    '400': responseRef('BadRequest'),
    ...(spec.requestBody && { '413': responseRef('PayloadTooLarge') }),
    '500': responseRef('InternalError'),
  };
}

/** Success responses of keyed requests carry the rate-limit headers (spec section 8). */
const RATE_HEADERS = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
};

type Spec = Omit<Operation, 'security' | 'tags'> & { tags?: string[] };

function withRateHeaders(responses: Operation['responses']): Operation['responses'] {
  const out: Operation['responses'] = {};
  for (const [status, r] of Object.entries(responses)) {
    out[status] = status.startsWith('2') && !('$ref' in r) ? { ...r, headers: { ...r.headers, ...RATE_HEADERS } } : r;
  }
  return out;
}

/** An endpoint that needs an API key with `scope` ('any': verify and rotate). */
export function keyed(scope: Scope | 'any', tag: string, spec: Spec): Operation {
  const responses = {
    ...withRateHeaders(spec.responses),
    ...commonErrors(spec),
    '401': responseRef('InvalidApiKey'),
    '403': responseRef('Forbidden'),
    '429': responseRef('RateLimited'),
  };
  return { ...spec, tags: spec.tags ?? [tag], security: [{ ApiKey: scope === 'any' ? [] : [scope] }], responses };
}

/** An endpoint of the platform operator (a SIWE sign-in token of a granted wallet). */
export function admin(tag: string, spec: Spec): Operation {
  const responses = {
    ...spec.responses,
    ...commonErrors(spec),
    '401': responseRef('InvalidAdminToken'),
    '403': responseRef('AdminRequired'),
  };
  return { ...spec, tags: spec.tags ?? [tag], security: [{ AdminToken: [] }], responses };
}

/** An endpoint anyone may call (`security: []` overrides nothing: the document sets no default). */
export function open(tag: string, spec: Spec): Operation {
  return { ...spec, tags: spec.tags ?? [tag], security: [], responses: { ...spec.responses, ...commonErrors(spec) } };
}

/** A player's capability URL: the stream session id in the query is the whole authorisation. */
export function capability(tag: string, spec: Spec): Operation {
  const responses = {
    ...spec.responses,
    ...commonErrors(spec),
    '403': responseRef('Forbidden'),
    '404': responseRef('NotFound'),
  };
  return { ...spec, tags: spec.tags ?? [tag], security: [{ ViewerSession: [] }], responses };
}

export const notFound = responseRef('NotFound');
export const conflict = responseRef('Conflict');
export const keyReused = responseRef('IdempotencyKeyReused');
export const moneyConflict = responseRef('MoneyConflict');

/** On every request that moves money (server/middleware/idempotency.ts). */
export const idempotencyKeyParam: Parameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    "1 to 255 visible ASCII characters, the organization's own for 24 h: a retry " +
    'with the same key and body gets the first success again (header ' +
    'Idempotent-Replayed: true) and moves nothing; another body is 409 ' +
    'IDEMPOTENCY_KEY_REUSED, a retry while the first is still answered 409 ' +
    'CONFLICT. A failed request lets the key go.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};
export const errorResponse = responseRef;
