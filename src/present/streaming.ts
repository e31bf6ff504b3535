import { iso } from '../clock.js';
import type { SessionRow, ViewerRow } from '../db/repos/index.js';
import type { CreatedSession } from '../domain/streaming.js';

export const playlistPath = (s: SessionRow) => `/api/v1/stream/${s.contentId}/playlist?session=${s.id}`;

/** POST /stream/{contentId}: both shapes' fields (walletAddress and isNewViewer are Shape A's). */
export function createdSessionBody(c: CreatedSession) {
  return {
    sessionId: c.session.id,
    id: c.session.id,
    contentId: c.session.contentId,
    viewerId: c.viewer.id,
    playlistUrl: playlistPath(c.session),
    binaryId: c.viewer.binaryId,
    walletAddress: c.viewer.walletAddress,
    isNewViewer: c.isNewViewer,
    watermarked: c.session.watermarked,
    isActive: c.session.isActive,
    bytesServed: c.session.bytesServed,
    expiresAt: iso(c.session.expiresAt),
    createdAt: iso(c.session.createdAt),
  };
}

/** GET /stream/sessions/{id}; `binaryId` is the viewer's. */
export function sessionBody(s: SessionRow, binaryId: string, now: number) {
  return {
    id: s.id,
    sessionId: s.id,
    contentId: s.contentId,
    viewerId: s.viewerId,
    binaryId,
    watermarked: s.watermarked,
    isActive: s.isActive && s.expiresAt > now,
    bytesServed: s.bytesServed,
    ipAddress: s.ipAddress,
    userAgent: s.userAgent,
    expiresAt: iso(s.expiresAt),
    createdAt: iso(s.createdAt),
  };
}

export function viewerBody(v: ViewerRow) {
  return {
    id: v.id,
    externalViewerId: v.externalViewerId,
    walletAddress: v.walletAddress,
    hasOwnWallet: v.hasOwnWallet,
    binaryId: v.binaryId,
    email: v.email,
    totalStreams: v.totalStreams,
    isBlocked: v.isBlocked,
    ...(v.isBlocked && { blockedReason: v.blockedReason }),
    firstSeen: iso(v.firstSeen),
    lastSeen: iso(v.lastSeen),
  };
}

/** The search view: adds organizationName, leaves out isBlocked and lastSeen (spec section 2). */
export function viewerSearchBody(v: ViewerRow, organizationName: string) {
  return {
    id: v.id,
    externalViewerId: v.externalViewerId,
    walletAddress: v.walletAddress,
    binaryId: v.binaryId,
    organizationName,
    email: v.email,
    totalStreams: v.totalStreams,
    firstSeen: iso(v.firstSeen),
  };
}
