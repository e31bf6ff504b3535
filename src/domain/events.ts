import type { Context } from '../context.js';
import { iso } from '../clock.js';
import { newId } from '../crypto/tokens.js';

export type EventType =
  | 'viewer.created'
  | 'viewer.stream'
  | 'viewer.blocked'
  | 'organization.suspended'
  | 'webhook.test'
  | 'invoice.issued'
  | 'invoice.paid'
  | 'invoice.payment_failed'
  | 'balance.negative'
  | 'payment.refunded'
  | 'payment.disputed';

/**
 * Writes an event to the outbox: called with the context of the transaction of the change
 * that caused it, the event exists exactly when the change does. The delivery
 * worker sends it later; the bell rung once the transaction commits makes that prompt.
 */
export async function recordEvent(
  ctx: Context,
  organizationId: string,
  type: EventType,
  data: Record<string, unknown>,
  options: { queue?: boolean; webhookUrl?: string | null } = {},
): Promise<string> {
  const id = newId();
  const now = ctx.clock.now();
  const noEndpoint = options.webhookUrl === null;
  const body = JSON.stringify({ id, type, createdAt: iso(now), organizationId, data });
  await ctx.repos.webhookDeliveries.insert({
    id,
    organizationId,
    eventType: type,
    body,
    // An organization known to have no webhook URL: skipped now, as the worker would find it, so
    // that it costs the worker no round (every session records an event).
    status: noEndpoint ? 'skipped' : 'pending',
    attempts: 0,
    responseCode: null,
    lastError: noEndpoint ? 'no webhookUrl' : null,
    // Not queued (a test send made by the request itself, or skipped): the worker never picks it up.
    nextAttemptAt: options.queue === false || noEndpoint ? null : now,
    leaseUntil: null,
    createdAt: now,
    deliveredAt: null,
  });
  if (!noEndpoint && options.queue !== false) ctx.afterCommit(() => ctx.webhookBell.ring());
  return id;
}
