import type { Context } from '../../context.js';
import type { ContentRow, SessionRow } from '../../db/repos/index.js';
import type { CandidateFit } from './matching/candidate-set.js';
import type { Classification, MixedCopy } from './matching/matching.js';
import type { SegmentRuleKind } from '../../watermark/segment-rule.js';
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
  session: {
    id: string;
    binaryId: string;
    isActive: boolean;
    bytesServed: number;
    createdAt: number;
    expiresAt: number;
  };
  viewer: { viewerId: string; externalViewerId: string; ipAddress: string | null; userAgent: string | null };
  content: { contentId: string; contentType: string; title: string };
  /** sessions the viewer had of this content (all carry the same bits; `session` is the one that received the most) */
  viewerSessions: number;
}

/**
 * A candidate a weak result lists, or a suspect of a mixed copy, as the case keeps it: the match's
 * figures and whose viewer it is. Who may see which of them is the presenter's business.
 */
export interface ListedCandidate extends CandidateFit {
  /** the viewer's organization; null for the stand-in of sessions served unmarked */
  organizationId: string | null;
  externalViewerId: string | null;
  /** a named colluder's evidence (a mixed copy whose pair is named); absent otherwise */
  evidence?: Evidence | null;
}

/** What an analysis found: the verdict, the detector's readings, and the evidence when a viewer is named. */
export interface ForensicReport {
  classification: Classification;
  /** the leak reads as variant A throughout, as served where a license turns watermarking off: nobody can be named */
  matchesUnmarkedSessions?: boolean;
  binaryId: string;
  /** the bits the leak decides on its own, `?` elsewhere (absent in reports made before it was kept) */
  readout?: string;
  supportedBits: number;
  /** the mark figure: the chance that a copy without this content's mark reads as strongly */
  markProbability: number;
  /**
   * the identification figure: the chance that an innocent fits the decided bits (null in reports made before it was
   * computed)
   */
  identificationProbability: number | null;
  /** the identification figure a strong match needed when the case was decided */
  strongBelow?: number;
  decidedBits?: number;
  /** candidates whose ids agree with every decided bit */
  fitting?: number;
  /** weak_match: the candidates that fit (at most 20) */
  candidateSet?: ListedCandidate[];
  /** in a view for one organization: listed candidates and suspects of other organizations, counted only */
  candidatesOutsideOrganization?: number;
  segmentsToSeparate?: number | null;
  segmentsToName?: number | null;
  /**
   * a mixed copy's analysis; cases decided before suspects were only the viewers in every least coalition lack
   * `exhaustive`, `inEveryCoalition`, `implicationProbability` and each suspect's `bound`
   */
  mixed?:
    | (Omit<MixedCopy, 'suspects' | 'exhaustive' | 'inEveryCoalition' | 'implicationProbability'> &
        Partial<Pick<MixedCopy, 'exhaustive' | 'inEveryCoalition' | 'implicationProbability'>> & {
          suspects: (ListedCandidate & { bound?: number })[];
        })
    | null;
  /** why this classification, in one sentence */
  reason?: string;
  candidates: number;
  score: number | null;
  contradictions: number;
  /** the content's segment rule (absent in reports made before rules were keyed: the fixed one) */
  segmentRule?: SegmentRuleKind;
  /** how long each of the content's segments is, in seconds (absent in reports made before lengths varied: 10) */
  segmentSeconds?: number;
  detection: Pick<Detection, 'segments' | 'alignment'>;
  evidence: Evidence | null;
  /** seconds the analysis took */
  seconds: number;
  /** the leak's hash, size, duration and pictures (absent in reports made before they were kept) */
  leak?: LeakRecord;
}

/**
 * A report as stored: those of cases decided before the two figures carry the mark figure as falsePositiveProbability.
 */
export function normalizedReport(stored: ForensicReport & { falsePositiveProbability?: number }): ForensicReport {
  return {
    ...stored,
    markProbability: stored.markProbability ?? stored.falsePositiveProbability ?? 1,
    identificationProbability: stored.identificationProbability ?? null,
  };
}

/** Whose viewers the listed candidates are (the stand-in for unmarked sessions is nobody's). */
export async function listedCandidates(
  ctx: Context,
  fits: readonly CandidateFit[],
  unmarkedId: string,
): Promise<ListedCandidate[]> {
  return Promise.all(
    fits.map(async (fit) => {
      const viewer = fit.viewerId === unmarkedId ? undefined : await ctx.repos.viewers.find(fit.viewerId);
      return {
        ...fit,
        organizationId: viewer?.organizationId ?? null,
        externalViewerId: viewer?.externalViewerId ?? null,
      };
    }),
  );
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
    viewer: {
      viewerId: viewer.id,
      externalViewerId: viewer.externalViewerId,
      ipAddress: session.ipAddress,
      userAgent: session.userAgent,
    },
    content: { contentId: content.id, contentType: content.type, title: content.title },
    viewerSessions,
  };
}
