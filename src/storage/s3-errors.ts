import { DrmError } from '../errors.js';

/** What an S3 call's failure carries: the SDK's error name, its HTTP status, or a socket's code. */
interface S3Failure {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

const CREDENTIALS = 'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or a role) to a key of the store';
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'TimeoutError',
]);

/**
 * An object store's refusal as one sentence an operator can act on. The SDK's own messages name
 * neither the store nor the fix ("The AWS Access Key Id you provided does not exist in our
 * records"), and a refused socket surfaces as a bare errno; `where` is the store as the operator
 * typed it, `doing` what drm was doing (e.g. "setting the bucket's CORS").
 */
export function storeError(
  err: unknown,
  where: { store: string; endpoint: string; bucket: string },
  doing: string,
): DrmError {
  if (err instanceof DrmError) return err;
  const e = (err ?? {}) as S3Failure;
  const name = e.name ?? '';
  const status = e.$metadata?.httpStatusCode;
  const code = e.code ?? (err as { cause?: { code?: string } })?.cause?.code;
  const fail = (message: string, kind: 'CONFLICT' | 'INTERNAL_ERROR' = 'INTERNAL_ERROR') =>
    new DrmError(kind, `${where.store}: ${doing}: ${message}`, { cause: err });
  if (name === 'CredentialsProviderError') return fail(`no credentials for the store: ${CREDENTIALS}`);
  if (status === undefined && (UNREACHABLE.has(code ?? '') || UNREACHABLE.has(name))) {
    return fail(
      `cannot reach ${where.endpoint} (${code ?? name}): is the store running, and is ` +
        `--s3-endpoint (DRM_S3_ENDPOINT) right?`,
    );
  }
  if (
    name === 'InvalidAccessKeyId' ||
    name === 'SignatureDoesNotMatch' ||
    name === 'InvalidToken' ||
    name === 'ExpiredToken'
  ) {
    return fail(`the store refused the credentials (${name}): ${CREDENTIALS}`);
  }
  if (name === 'BucketAlreadyExists') {
    return fail(
      `the bucket name ${where.bucket} is taken by another account: bucket names are global, choose another in --store`,
      'CONFLICT',
    );
  }
  if (name === 'AccessDenied' || status === 403) {
    return fail(
      `access denied to bucket ${where.bucket}: it belongs to another account, or ` +
        `these credentials may not manage it (they need s3:CreateBucket, s3:GetBucketCORS and s3:PutBucketCORS)`,
    );
  }
  if (name === 'NotImplemented' || status === 501) {
    return fail(
      "the store does not implement bucket CORS: set it in the store's own " +
        'settings, or serve segments by proxy (--segment-delivery proxy)',
    );
  }
  return fail(`${name || 'error'}${status ? ` (HTTP ${status})` : ''}: ${e.message ?? String(err)}`);
}
