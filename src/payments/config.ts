import { DrmError } from '../errors.js';

/** The card processor (Stripe, by its official SDK) a deployment takes card payments through. */
export interface FiatConfig {
  secretKey: string;
  webhookSecret: string;
  /** the processor's API elsewhere (a local stand-in in tests): protocol, host and port */
  apiBase?: { protocol: 'http' | 'https'; host: string; port: number };
}

export interface FiatInput {
  fiatSecretKey?: string;
  fiatWebhookSecret?: string;
  fiatApiBase?: string;
}

export function resolveFiatConfig(input: FiatInput, env: NodeJS.ProcessEnv): FiatConfig | undefined {
  const secretKey = input.fiatSecretKey ?? env.DRM_FIAT_SECRET_KEY;
  const webhookSecret = input.fiatWebhookSecret ?? env.DRM_FIAT_WEBHOOK_SECRET;
  const base = input.fiatApiBase ?? env.DRM_FIAT_API_BASE;
  if (!secretKey && !webhookSecret) {
    if (base) throw new DrmError('BAD_REQUEST', '--fiat-api-base needs --fiat-secret-key and --fiat-webhook-secret');
    return undefined;
  }
  if (!secretKey || !webhookSecret)
    throw new DrmError(
      'BAD_REQUEST',
      '--fiat-secret-key and --fiat-webhook-secret go together: card payments need both',
    );
  if (!/^(sk|rk)_(test|live)_\w{4,}$/.test(secretKey))
    throw new DrmError('BAD_REQUEST', '--fiat-secret-key must be a secret key such as sk_live_…');
  if (!/^whsec_\w{4,}$/.test(webhookSecret))
    throw new DrmError('BAD_REQUEST', '--fiat-webhook-secret must be a webhook signing secret such as whsec_…');
  return { secretKey, webhookSecret, ...(base !== undefined && { apiBase: apiBaseOf(base) }) };
}

function apiBaseOf(raw: string): NonNullable<FiatConfig['apiBase']> {
  if (!URL.canParse(raw)) throw new DrmError('BAD_REQUEST', `--fiat-api-base must be a URL, got "${raw}"`);
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new DrmError('BAD_REQUEST', '--fiat-api-base must be http(s)');
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { protocol, host: url.hostname, port: Number(url.port || (protocol === 'http' ? 80 : 443)) };
}
