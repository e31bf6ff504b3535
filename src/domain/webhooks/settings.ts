import type { Context } from '../../context.js';
import { seal, unseal } from '../../crypto/sealed.js';
import { generateWebhookSecret } from '../../crypto/tokens.js';
import type { DeliveryRow } from '../../db/repos/index.js';
import { badRequest } from '../../errors.js';
import type { KeyAuth } from '../auth.js';
import { recordEvent } from '../events.js';
import { asObject, optionalBoolean } from '../validate.js';
import { attemptDelivery } from './deliver.js';
import { checkWebhookUrl } from './url-policy.js';

/** PUT /webhook: sets or clears the URL and, when asked, replaces the secret; answers with both. */
export async function updateWebhook(
  ctx: Context,
  auth: KeyAuth,
  body: unknown,
): Promise<{ webhookUrl: string | null; webhookSecret: string }> {
  const f = asObject(body);
  const regenerate = optionalBoolean(f, 'regenerateSecret') ?? false;
  let webhookUrl = auth.org.webhookUrl;
  if ('webhookUrl' in f) {
    const v = f.webhookUrl;
    if (v === null || v === '') webhookUrl = null;
    else if (typeof v !== 'string' || v.length > 2000) throw badRequest('webhookUrl must be a URL string or null');
    else webhookUrl = (await checkWebhookUrl(v, ctx.config.allowPrivateWebhooks)).toString();
  } else if (!regenerate) {
    throw badRequest('give webhookUrl, regenerateSecret or both');
  }
  const webhookSecret = regenerate ? generateWebhookSecret() : unseal(ctx.keys.seal, auth.org.webhookSecretSealed);
  await ctx.repos.organizations.update(auth.org.id, {
    webhookUrl,
    ...(regenerate && { webhookSecretSealed: seal(ctx.keys.seal, webhookSecret) }),
  });
  return { webhookUrl, webhookSecret };
}

/** POST /webhook/test: sends a webhook.test event now, once, and reports what the receiver answered. */
export async function sendTestWebhook(
  ctx: Context,
  auth: KeyAuth,
): Promise<{ success: boolean; responseCode: number }> {
  if (!auth.org.webhookUrl) throw badRequest('no webhookUrl is set; set one with PUT /api/v1/webhook');
  const id = await ctx.db.transaction((tx) =>
    recordEvent(
      tx,
      auth.org.id,
      'webhook.test',
      { message: 'test delivery', organizationId: auth.org.id },
      { queue: false },
    ),
  );
  const row = (await ctx.repos.webhookDeliveries.find(id)) as DeliveryRow;
  const outcome = await attemptDelivery(ctx, row, { retry: false });
  await ctx.repos.webhookDeliveries.record(id, outcome);
  return { success: outcome.status === 'delivered', responseCode: outcome.responseCode ?? 0 };
}

export function listDeliveries(ctx: Context, auth: KeyAuth, page: { limit: number; offset: number }) {
  return ctx.repos.webhookDeliveries.listForOrg(auth.org.id, page.limit, page.offset);
}
