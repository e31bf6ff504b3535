import type { ErrorCode } from '../../src/errors.js';
import { int, object, type Response, type Schema, str } from './build.js';

/**
 * Every error code with its HTTP status. A Record over ErrorCode, so that a code added to the
 * core without being documented here fails the typecheck; the drift test checks the statuses
 * against DrmError's own.
 */
export const ERROR_CODES: Record<ErrorCode, { status: number; meaning: string }> = {
  INVALID_API_KEY: { status: 401, meaning: 'key missing, invalid or revoked' },
  INSUFFICIENT_SCOPE: { status: 403, meaning: 'key lacks the scope the endpoint needs' },
  LICENSE_REQUIRED: { status: 403, meaning: 'organization has no active license for the content' },
  INSUFFICIENT_BALANCE: { status: 402, meaning: 'balance too low for the operation' },
  NOT_FOUND: { status: 404, meaning: 'content, viewer, session, route or other resource not found' },
  BAD_REQUEST: { status: 400, meaning: 'malformed request, missing required fields or invalid values' },
  RATE_LIMIT_EXCEEDED: { status: 429, meaning: 'too many requests in the current hourly window' },
  INTERNAL_ERROR: { status: 500, meaning: 'unexpected server error' },
  VIEWER_BLOCKED: { status: 403, meaning: 'the viewer is blocked and cannot start a session' },
  SESSION_EXPIRED: { status: 403, meaning: 'the stream session has ended or expired' },
  ORGANIZATION_SUSPENDED: { status: 403, meaning: "the platform admin suspended the key's organization" },
  ROTATION_COOLDOWN: { status: 429, meaning: 'less than an hour since the last key rotation (Retry-After says when)' },
  MONTHLY_STREAM_LIMIT_EXCEEDED: { status: 429, meaning: "the organization's monthly stream limit is reached" },
  PAYLOAD_TOO_LARGE: { status: 413, meaning: 'request body or upload over the server limit' },
  INVALID_ADMIN_TOKEN: { status: 401, meaning: 'admin token missing, invalid or expired, or a failed sign-in' },
  ADMIN_REQUIRED: { status: 403, meaning: 'the wallet is not a platform admin' },
  CONFLICT: {
    status: 409,
    meaning: 'the request conflicts with the current state (e.g. a product already subscribed)',
  },
  REQUEST_HEADERS_TOO_LARGE: { status: 431, meaning: 'request headers over the server limit' },
  PAYMENT_METHOD_NOT_CONFIGURED: { status: 422, meaning: 'the payment method is not set up on this deployment' },
  IDEMPOTENCY_KEY_REUSED: { status: 409, meaning: 'the idempotency key was used before for a different request' },
};

/** The spec's error body (section 7): Shape A's `status` is always sent. */
const ERROR_SCHEMA: Schema = {
  ...object({
    error: str('human-readable message'),
    code: { type: 'string', enum: Object.keys(ERROR_CODES) },
    status: int('the HTTP status, repeated'),
  }),
  additionalProperties: false,
};

const errorHeader = (name: string) => ({ $ref: `#/components/headers/${name}` });

function errorResponse(codes: ErrorCode[], headers?: Record<string, unknown>): Response {
  const first = codes[0] as ErrorCode;
  const list = codes.map((c) => `\`${c}\` (${ERROR_CODES[c].meaning})`).join('; ');
  return {
    description: codes.length === 1 ? list : `one of: ${list}`,
    ...(headers && { headers }),
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        example: { error: ERROR_CODES[first].meaning, code: first, status: ERROR_CODES[first].status },
      },
    },
  };
}

const RATE = {
  'X-RateLimit-Limit': errorHeader('X-RateLimit-Limit'),
  'X-RateLimit-Remaining': errorHeader('X-RateLimit-Remaining'),
  'X-RateLimit-Reset': errorHeader('X-RateLimit-Reset'),
};

export const RESPONSES: Record<string, Response> = {
  BadRequest: errorResponse(['BAD_REQUEST']),
  InvalidApiKey: errorResponse(['INVALID_API_KEY']),
  InvalidAdminToken: errorResponse(['INVALID_ADMIN_TOKEN']),
  AdminRequired: errorResponse(['ADMIN_REQUIRED']),
  Forbidden: errorResponse([
    'INSUFFICIENT_SCOPE',
    'ORGANIZATION_SUSPENDED',
    'LICENSE_REQUIRED',
    'VIEWER_BLOCKED',
    'SESSION_EXPIRED',
  ]),
  InsufficientBalance: errorResponse(['INSUFFICIENT_BALANCE']),
  NotFound: errorResponse(['NOT_FOUND']),
  Conflict: errorResponse(['CONFLICT']),
  IdempotencyKeyReused: errorResponse(['IDEMPOTENCY_KEY_REUSED']),
  /** a money request's 409: its own conflict, or its Idempotency-Key in flight (CONFLICT) or used for another body */
  MoneyConflict: errorResponse(['CONFLICT', 'IDEMPOTENCY_KEY_REUSED']),
  PayloadTooLarge: errorResponse(['PAYLOAD_TOO_LARGE']),
  PaymentMethodNotConfigured: errorResponse(['PAYMENT_METHOD_NOT_CONFIGURED']),
  RateLimited: errorResponse(['RATE_LIMIT_EXCEEDED', 'ROTATION_COOLDOWN', 'MONTHLY_STREAM_LIMIT_EXCEEDED'], {
    ...RATE,
    'Retry-After': errorHeader('Retry-After'),
  }),
  InternalError: errorResponse(['INTERNAL_ERROR']),
};

export const HEADERS = {
  'X-RateLimit-Limit': {
    description: 'requests allowed in the hourly window (the tighter of the organization and the key)',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': { description: 'requests left in the window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'when the window resets, in epoch seconds', schema: { type: 'integer' } },
  'Retry-After': { description: 'seconds until the request may be tried again', schema: { type: 'integer' } },
};

export const SECURITY_SCHEMES = {
  ApiKey: {
    type: 'http',
    scheme: 'bearer',
    description:
      "The organization's API key (`drm_live_…`) as `Authorization: Bearer " +
      '<API_KEY>` (spec section 5). The security requirement names the scope the ' +
      'endpoint needs (catalog, stream, billing, forensics); none listed means any ' +
      'scope.',
  },
  AdminToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A platform admin token from the SIWE sign-in (GET /api/v1/admin/auth/nonce, ' +
      'then POST /api/v1/admin/auth/verify), 12 hours, as `Authorization: Bearer ' +
      '<ACCESS_TOKEN>`.',
  },
  ViewerSession: {
    type: 'apiKey',
    in: 'query',
    name: 'session',
    description:
      'The stream session id (from POST /api/v1/stream/{contentId}): the capability ' +
      'a player holds for the playlist, key and segments. A missing one is 400 ' +
      'BAD_REQUEST; an ended or expired one 403 SESSION_EXPIRED.',
  },
};

export const ERROR_SCHEMAS = { Error: ERROR_SCHEMA };
