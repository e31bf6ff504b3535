import { iso } from '../clock.js';
import type { DeliveryRow } from '../db/repos/index.js';

export function deliveryBody(d: DeliveryRow) {
  return {
    id: d.id,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    responseCode: d.responseCode,
    createdAt: iso(d.createdAt),
    deliveredAt: d.deliveredAt === null ? null : iso(d.deliveredAt),
    nextAttemptAt: d.nextAttemptAt === null || d.status !== 'retrying' ? null : iso(d.nextAttemptAt),
    lastError: d.lastError,
  };
}
