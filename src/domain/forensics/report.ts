import type { Context } from '../../context.js';
import type { ContentRow, SessionRow } from '../../db/repos/index.js';
import type { MatchResult } from '../../forensics/matching.js';
import type { Detection } from '../../watermark/segments.js';
import type { LeakRecord } from './leak-record.js';

/**
 * Who stands behind a matched leak, as it was when the case was decided: stored with the case,
 * so the record does not change when the session later ends, the key is rotated or the viewer
 * moves. Both shapes of the evidence chain are views of this.
 */
export interface Evidence {
  apiKey: { id: string; prefix: string; name: string } | null;
  organization: { id: string; name: string; email: string | null };
  wallet: { address: string; hasOwnWallet: boolean };
  session: { id: string; binaryId: string; isActive: boolean; bytesServed: number; createdAt: number; expiresAt: number };
  viewer: { viewerId: string; externalViewerId: string; ipAddress: string | null; userAgent: string | null };
  content: { contentId: string; contentType: string; title: string };
  /** sessions the viewer had of this content (all carry the same bits; `session` is the one that received the most) */
  viewerSessions: number;
}

/** What an analysis found: the match, the detector's readings, and the evidence when a viewer is named. */
export interface ForensicReport {
  classification: MatchResult['classification'];
  /** the leak reads as variant A throughout, as served where a license turns watermarking off: nobody can be named */
  matchesUnmarkedSessions?: boolean;
  binaryId: string;
  /** the bits the leak decides on its own, `?` elsewhere (absent in reports made before it was kept) */
  readout?: string;
  supportedBits: number;
  falsePositiveProbability: number;
  confusionProbability: number;
  candidates: number;
  score: number | null;
  runnerUp: MatchResult['runnerUp'] | null;
  contradictions: number;
  detection: Pick<Detection, 'segments' | 'alignment'>;
  evidence: Evidence | null;
  /** seconds the analysis took */
  seconds: number;
  /** the leak's hash, size, duration and pictures (absent in reports made before they were kept) */
  leak?: LeakRecord;
}

/** The evidence of a matched viewer's most complete session of the content. */
export async function evidenceFor(ctx: Context, viewerId: string, content: ContentRow): Promise<Evidence | null> {
  const session: SessionRow | undefined = await ctx.repos.forensicCases.sessionOfLeak(viewerId, content.id);
  const viewer = await ctx.repos.viewers.find(viewerId);
  if (!session || !viewer) return null;
  const [org, key, viewerSessions] = await Promise.all([
    ctx.repos.organizations.find(session.organizationId),
    ctx.repos.apiKeys.find(session.apiKeyId),
    ctx.repos.forensicCases.sessionCount(viewerId, content.id),
  ]);
  if (!org) return null;
  const now = ctx.clock.now();
  return {
    apiKey: key ? { id: key.id, prefix: key.prefix, name: key.name } : null,
    organization: { id: org.id, name: org.name, email: org.email },
    wallet: { address: viewer.walletAddress, hasOwnWallet: viewer.hasOwnWallet },
    session: {
      id: session.id,
      binaryId: viewer.binaryId,
      isActive: session.isActive && session.expiresAt > now,
      bytesServed: session.bytesServed,
      createdAt: session.createdAt,
      expiresAt: session.expiresAt,
    },
    viewer: { viewerId: viewer.id, externalViewerId: viewer.externalViewerId, ipAddress: session.ipAddress, userAgent: session.userAgent },
    content: { contentId: content.id, contentType: content.type, title: content.title },
    viewerSessions,
  };
}
