import { randomUUID } from 'node:crypto';
import type { SessionRow } from '../../src/db/repos/index.js';

/** A session of the bench's organization, as the streaming code writes one; the fields a bench varies given. */
export const benchSession = (
  organizationId: string,
  viewerId: string,
  more: Pick<SessionRow, 'bytesServed' | 'expiresAt' | 'createdAt' | 'pricePerStreamMicro'> & { id?: string },
): SessionRow => ({
  id: randomUUID(),
  organizationId,
  apiKeyId: 'bench',
  contentId: 'bench',
  viewerId,
  ipAddress: null,
  userAgent: null,
  isActive: true,
  watermarked: true,
  viewerBits: null,
  ...more,
});
