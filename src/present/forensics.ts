import { iso } from '../clock.js';
import type { ApiShape } from '../config.js';
import type { CaseRow } from '../db/repos/index.js';
import { reportOf } from '../domain/forensics/cases.js';
import type { Evidence, ForensicReport, ListedCandidate } from '../domain/forensics/report.js';
import { DEFAULT_SEGMENT_SECONDS } from '../watermark/segment-rule.js';
import { ID_BITS, positionOfReading } from '../watermark/segments.js';

/**
 * The forensic views of section 4.8 in both shapes. Where the shapes do not collide the union is
 * sent (matchedViewer and matchedViewerId, streamDate and sessionDate); `confidence`, the evidence
 * chain and the case detail's nesting follow --api-shape (docs/api.md, the decisions on the two shapes).
 *
 * Who looks decides what is shown. Matching weighs every viewer who streamed the content, of any
 * organization, but an organization sees identities only of its own viewers: when the best match
 * is another organization's viewer, its view keeps the classification and the figures and says
 * `matchedOutsideOrganization: true`, with no field that names that viewer or organization (the
 * read-out shows only the bits the leak itself decides). The platform operator sees everything.
 */
export type Audience = { organizationId: string } | 'operator';

export interface Visible {
  report: ForensicReport | null;
  evidence: Evidence | null;
  /** the leak's read-out as this audience may see it */
  binaryId: string | null;
  matchedOutsideOrganization: boolean;
}

/** What `audience` may see of a case: the API's views and the evidence report (src/report/) alike. */
export function visibleTo(row: CaseRow, audience: Audience): Visible {
  const stored = reportOf(row);
  const report = stored && audience !== 'operator' ? withOwnCandidates(stored, audience.organizationId) : stored;
  const evidence = report?.evidence ?? null;
  const outside = audience !== 'operator' && evidence !== null && evidence.organization.id !== audience.organizationId;
  if (!outside) return { report, evidence, binaryId: row.binaryId, matchedOutsideOrganization: false };
  const readout = report?.readout ?? '?'.repeat(ID_BITS);
  // The stored report names the other organization's viewer: what goes out carries none of it.
  const redacted = report && { ...report, evidence: null, binaryId: readout };
  return { report: redacted, evidence: null, binaryId: readout, matchedOutsideOrganization: true };
}

/** Candidates and suspects of other organizations leave a count behind and nothing that names them. */
function withOwnCandidates(report: ForensicReport, organizationId: string): ForensicReport {
  const own = (list: readonly ListedCandidate[] = []) =>
    list.filter((c) => c.organizationId === organizationId || c.organizationId === null);
  const elsewhere = (list: readonly ListedCandidate[] = []) => list.length - own(list).length;
  const mixed = report.mixed && { ...report.mixed, suspects: own(report.mixed.suspects) };
  return {
    ...report,
    candidateSet: own(report.candidateSet),
    candidatesOutsideOrganization: elsewhere(report.candidateSet) + elsewhere(report.mixed?.suspects),
    mixed,
  };
}

/** B: how many of the 40 bits the leak supports; A: the same as a fraction of 40. */
const confidenceOf = (report: ForensicReport | null, shape: ApiShape) => {
  const bits = report?.supportedBits ?? 0;
  return shape === 'a' ? Math.round((bits / ID_BITS) * 1000) / 1000 : bits;
};

function evidenceChain(e: Evidence | null, report: ForensicReport | null, shape: ApiShape, detail: boolean) {
  if (!e) return null;
  if (shape === 'a') {
    return {
      organization: e.organization.name,
      viewer: e.viewer.viewerId,
      wallet: e.wallet.address,
      content: e.content.title,
      streamDate: iso(e.session.createdAt),
      ipAddress: e.viewer.ipAddress,
      confidence: confidenceOf(report, shape),
    };
  }
  return {
    apiKey: e.apiKey,
    organization: e.organization,
    wallet: e.wallet,
    session: detail
      ? {
          id: e.session.id,
          binaryId: e.session.binaryId,
          bytesServed: e.session.bytesServed,
          createdAt: iso(e.session.createdAt),
        }
      : { ...e.session, createdAt: iso(e.session.createdAt), expiresAt: iso(e.session.expiresAt) },
    viewer: detail
      ? { viewerId: e.viewer.viewerId, ipAddress: e.viewer.ipAddress }
      : { viewerId: e.viewer.viewerId, ipAddress: e.viewer.ipAddress, userAgent: e.viewer.userAgent },
    content: e.content,
  };
}

function matchedSession(e: Evidence | null, report: ForensicReport | null, shape: ApiShape) {
  if (!e) return null;
  const date = iso(e.session.createdAt);
  return {
    sessionId: e.session.id,
    viewerId: e.viewer.viewerId,
    externalViewerId: e.viewer.externalViewerId,
    walletAddress: e.wallet.address,
    ipAddress: e.viewer.ipAddress,
    streamDate: date,
    sessionDate: date,
    organization: e.organization.name,
    apiKey: e.apiKey?.prefix ?? null,
    binaryId: e.session.binaryId,
    confidence: confidenceOf(report, shape),
  };
}

const rounded = (p: number) => Number(p.toPrecision(3));

/** A listed candidate as the API shows it: the stand-in for unmarked sessions names nobody. */
const candidateView = (c: ListedCandidate) => ({
  viewerId: c.organizationId === null ? null : c.viewerId,
  externalViewerId: c.externalViewerId,
  ...(c.organizationId === null && { unmarkedSessions: true }),
  binaryId: c.organizationId === null ? null : c.binaryId,
  agreement: c.agreement,
  posterior: rounded(c.posterior),
  separatingSegments: c.separatingSegments,
  ...(c.evidence && { evidence: colluderChain(c.evidence) }),
});

/** A mixed copy's suspect: a listed candidate with its own bound (null in cases decided before it was kept). */
const suspectView = (c: ListedCandidate & { bound?: number }) => ({ ...candidateView(c), bound: c.bound ?? null });

/** A named colluder's chain, compact: who streamed, where from, with which key and wallet. */
const colluderChain = (e: Evidence) => ({
  organization: { id: e.organization.id, name: e.organization.name },
  apiKey: e.apiKey?.prefix ?? null,
  walletAddress: e.wallet.address,
  sessionId: e.session.id,
  sessionDate: iso(e.session.createdAt),
  ipAddress: e.viewer.ipAddress,
  userAgent: e.viewer.userAgent,
});

/** The numbers behind the classification, for the investigator and the court. */
function analysisOf(report: ForensicReport) {
  const mixed = report.mixed;
  return {
    reason: report.reason ?? null,
    markProbability: report.markProbability,
    identificationProbability: report.identificationProbability,
    strongBelow: report.strongBelow ?? null,
    candidates: report.candidates,
    decidedBits: report.decidedBits ?? null,
    fitting: report.fitting ?? null,
    candidateSet: (report.candidateSet ?? []).map(candidateView),
    candidatesOutsideOrganization: report.candidatesOutsideOrganization ?? 0,
    segmentsToSeparate: report.segmentsToSeparate ?? null,
    segmentsToName: report.segmentsToName ?? null,
    mixedCopy: mixed
      ? {
          bothPositions: mixed.bothPositions,
          erasedPositions: mixed.erasedPositions ?? [],
          leastSources: mixed.leastSources,
          coalitionsFound: mixed.coalitionsFound,
          exhaustive: mixed.exhaustive ?? null,
          inEveryCoalition: mixed.inEveryCoalition ?? null,
          implicationProbability: mixed.implicationProbability ?? null,
          named: mixed.named ?? false,
          pairProbability: mixed.pairProbability ?? null,
          suspects: mixed.suspects.map(suspectView),
        }
      : null,
    matchesUnmarkedSessions: report.matchesUnmarkedSessions ?? false,
    score: report.score,
    contradictions: report.contradictions,
    segmentRule: report.segmentRule ?? 'fixed',
    segmentSeconds: report.segmentSeconds ?? DEFAULT_SEGMENT_SECONDS,
    segments: report.detection.segments.map((s) => ({
      index: s.index,
      z: Math.round(s.z * 100) / 100,
      bit: s.bit,
      position: positionOfReading(s),
      flipped: s.flipped ?? false,
      coverage: Math.round(s.coverage * 10) / 10,
    })),
    alignment: report.detection.alignment,
    seconds: report.seconds,
  };
}

/** Shape B's two figures beside the classification (Shape A keeps `confidence` alone). */
function figures(report: ForensicReport | null, shape: ApiShape) {
  if (shape === 'a') return {};
  return {
    markProbability: report?.markProbability ?? null,
    identificationProbability: report?.identificationProbability ?? null,
  };
}

/** The case's own fields (the list view, and the detail's `case`). */
export function caseBody(row: CaseRow, shape: ApiShape, audience: Audience) {
  const { report, evidence: e, binaryId, matchedOutsideOrganization } = visibleTo(row, audience);
  return {
    id: row.id,
    caseId: row.id,
    contentId: row.contentId,
    contentType: row.contentType,
    status: row.status,
    ...(row.status === 'failed' && { failureReason: row.failureReason }),
    // What a running analysis (here or on a worker) last wrote, for a client that polls the case.
    ...(row.status === 'processing' && {
      progress: row.progress ? (JSON.parse(row.progress) as { stage: string; done: number; total: number }) : null,
    }),
    binaryId,
    confidence: report ? confidenceOf(report, shape) : null,
    classification: row.classification,
    ...figures(report, shape),
    matchedOutsideOrganization,
    matchedViewer: e?.viewer.viewerId ?? null,
    matchedViewerId: e?.viewer.viewerId ?? null,
    matchedExternalViewerId: e?.viewer.externalViewerId ?? null,
    matchedOrganization: e?.organization.name ?? null,
    matchedIpAddress: e?.viewer.ipAddress ?? null,
    matchedWallet: e?.wallet.address ?? null,
    matchedSessionDate: e ? iso(e.session.createdAt) : null,
    createdAt: iso(row.createdAt),
    completedAt: row.completedAt === null ? null : iso(row.completedAt),
  };
}

/** GET /forensics/cases/{id}: A flat with the evidence chain, B {case, evidenceChain}. */
export function caseDetailBody(row: CaseRow, shape: ApiShape, audience: Audience) {
  const { report, evidence } = visibleTo(row, audience);
  const chain = evidenceChain(evidence, report, shape, true);
  const body = { ...caseBody(row, shape, audience), ...(report && { analysis: analysisOf(report) }) };
  return shape === 'a' ? { ...body, evidenceChain: chain } : { case: body, evidenceChain: chain };
}

/** POST /forensics/analyze: the case as decided (or, for ?async=true, as queued). */
export function analysisBody(row: CaseRow, shape: ApiShape, audience: Audience) {
  const { report, evidence: e, binaryId, matchedOutsideOrganization } = visibleTo(row, audience);
  return {
    caseId: row.id,
    status: row.status,
    ...(row.status === 'failed' && { failureReason: row.failureReason }),
    contentId: row.contentId,
    contentType: row.contentType,
    binaryId,
    confidence: report ? confidenceOf(report, shape) : null,
    classification: row.classification,
    ...figures(report, shape),
    matchedOutsideOrganization,
    matchedSession: matchedSession(e, report, shape),
    evidenceChain: evidenceChain(e, report, shape, false),
    ...(report && { analysis: analysisOf(report) }),
  };
}
