import { createHmac } from 'node:crypto';
import type { Context } from '../../context.js';
import { unseal } from '../../crypto/sealed.js';
import type { DeliveryOutcome, DeliveryRow } from '../../db/repos/index.js';
import { checkWebhookUrl } from './url-policy.js';

/** Waits before attempts 2, 3, …: after the last one the delivery is marked failed. */
export const BACKOFF_MS = [30_000, 120_000, 600_000, 3_600_000, 21_600_000, 86_400_000];
export const MAX_ATTEMPTS = BACKOFF_MS.length + 1;
const TIMEOUT_MS = 10_000;

/**
 * Why no answer came: fetch says only "fetch failed" and keeps the reason (refused address, DNS, reset) in its cause.
 */
function failureText(err: unknown): string {
  if (!(err instanceof Error)) return 'delivery failed';
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`.slice(0, 300);
}

export const signBody = (secret: string, body: string) =>
  createHmac('sha256', secret).update(body, 'utf8').digest('hex');

/**
 * Makes one attempt at a delivery and says what became of it; the caller records the outcome.
 * The URL and secret are read now, so a changed webhook or regenerated secret applies to retries.
 */
export async function attemptDelivery(
  ctx: Context,
  row: DeliveryRow,
  options: { retry: boolean } = { retry: true },
): Promise<DeliveryOutcome> {
  const now = () => ctx.clock.now();
  const attempts = row.attempts + 1;
  const org = await ctx.repos.organizations.find(row.organizationId);
  if (!org?.webhookUrl) {
    return {
      status: 'skipped',
      attempts: row.attempts,
      responseCode: null,
      lastError: 'no webhookUrl',
      nextAttemptAt: null,
      deliveredAt: null,
    };
  }
  let responseCode: number | null = null;
  let lastError: string | null = null;
  try {
    await checkWebhookUrl(org.webhookUrl, ctx.config.allowPrivateWebhooks);
    const secret = unseal(ctx.keys.seal, org.webhookSecretSealed);
    const res = await ctx.fetch(org.webhookUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'drm-webhooks/1',
        'X-Service-Signature': signBody(secret, row.body),
        'X-Service-Event': row.eventType,
        'X-Service-Delivery': row.id,
      },
      body: row.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    responseCode = res.status;
    await res.body?.cancel().catch(() => {});
    if (res.status >= 200 && res.status < 300) {
      return { status: 'delivered', attempts, responseCode, lastError: null, nextAttemptAt: null, deliveredAt: now() };
    }
    lastError = `HTTP ${res.status}`;
  } catch (err) {
    lastError = failureText(err);
  }
  const wait = BACKOFF_MS[attempts - 1];
  if (options.retry && wait !== undefined) {
    return { status: 'retrying', attempts, responseCode, lastError, nextAttemptAt: now() + wait, deliveredAt: null };
  }
  return { status: 'failed', attempts, responseCode, lastError, nextAttemptAt: null, deliveredAt: null };
}
