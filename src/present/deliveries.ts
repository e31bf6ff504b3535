import { iso } from '../clock.js';
import type { DeliveryRow } from '../db/repos/index.js';

/**
 * One delivery as the spec's list shows it. `responseCode` is always a number, as in the test
 * send: the receiver's HTTP status, or 0 when no answer came (unreachable, refused, timed out,
 * skipped for want of a URL, or not attempted yet).
 */
export function deliveryBody(d: DeliveryRow) {
  return {
    id: d.id,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    responseCode: d.responseCode ?? 0,
    createdAt: iso(d.createdAt),
    deliveredAt: d.deliveredAt === null ? null : iso(d.deliveredAt),
    nextAttemptAt: d.nextAttemptAt === null || d.status !== 'retrying' ? null : iso(d.nextAttemptAt),
    lastError: d.lastError,
  };
}
