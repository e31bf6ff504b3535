/**
 * The one error type of the core. The server maps it once to the spec's error body
 * ({error, code, status}); the CLI maps it once to a message and an exit code.
 */
export type ErrorCode =
  | 'INVALID_API_KEY'
  | 'INSUFFICIENT_SCOPE'
  | 'LICENSE_REQUIRED'
  | 'INSUFFICIENT_BALANCE'
  | 'NOT_FOUND'
  | 'BAD_REQUEST'
  | 'RATE_LIMIT_EXCEEDED'
  | 'INTERNAL_ERROR'
  | 'VIEWER_BLOCKED'
  | 'SESSION_EXPIRED'
  | 'ORGANIZATION_SUSPENDED'
  | 'ROTATION_COOLDOWN'
  | 'MONTHLY_STREAM_LIMIT_EXCEEDED'
  | 'PAYLOAD_TOO_LARGE'
  | 'INVALID_ADMIN_TOKEN'
  | 'ADMIN_REQUIRED'
  | 'CONFLICT'
  | 'REQUEST_HEADERS_TOO_LARGE'
  | 'PAYMENT_METHOD_NOT_CONFIGURED'
  | 'IDEMPOTENCY_KEY_REUSED';

const STATUS: Record<ErrorCode, number> = {
  INVALID_API_KEY: 401,
  INSUFFICIENT_SCOPE: 403,
  LICENSE_REQUIRED: 403,
  INSUFFICIENT_BALANCE: 402,
  NOT_FOUND: 404,
  BAD_REQUEST: 400,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  VIEWER_BLOCKED: 403,
  SESSION_EXPIRED: 403,
  ORGANIZATION_SUSPENDED: 403,
  ROTATION_COOLDOWN: 429,
  MONTHLY_STREAM_LIMIT_EXCEEDED: 429,
  PAYLOAD_TOO_LARGE: 413,
  INVALID_ADMIN_TOKEN: 401,
  ADMIN_REQUIRED: 403,
  CONFLICT: 409,
  REQUEST_HEADERS_TOO_LARGE: 431,
  PAYMENT_METHOD_NOT_CONFIGURED: 422,
  IDEMPOTENCY_KEY_REUSED: 409,
};

export interface DrmErrorOptions {
  cause?: unknown;
  /** Extra response headers the edge should send (e.g. Retry-After). */
  headers?: Record<string, string>;
}

export class DrmError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: DrmErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'DrmError';
    this.code = code;
    this.status = STATUS[code];
    this.headers = options.headers ?? {};
  }
}

export const badRequest = (message: string) => new DrmError('BAD_REQUEST', message);
export const notFound = (what: string) => new DrmError('NOT_FOUND', `${what} not found`);

/** Turns anything thrown into a DrmError; unexpected errors keep their cause but not their text. */
export function asDrmError(err: unknown): DrmError {
  if (err instanceof DrmError) return err;
  return new DrmError('INTERNAL_ERROR', 'Internal server error', { cause: err });
}

/**
 * The reason a failed job or case gives whoever asked for it: a refusal in its own words
 * (content gone, not media), anything else as `<what> failed: <message>` when the core said what
 * went wrong, or `internal error` (the details are in the worker's log).
 */
export function jobFailureReason(err: unknown, what: string): string {
  if (err instanceof DrmError && err.code !== 'INTERNAL_ERROR') return err.message;
  return `${what} failed: ${err instanceof DrmError ? err.message : 'internal error'}`;
}
