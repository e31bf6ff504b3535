import type { ApiShape } from '../../src/config.js';
import { arrayOf, bool, int, nullable, num, object, ref, type Schema, str, time, uuid } from './build.js';
import { SCHEMA_PARTS } from './schemas-core.js';

// Section 2's forensic case, evidence chain and matched session as src/present/forensics.ts sends
// them. Where the shapes collide (confidence, the chain's nesting, the detail's nesting) the
// deployment's --api-shape decides, and so does this document.

const { binaryId, contentType, wallet } = SCHEMA_PARTS;

const confidence = (shape: ApiShape) =>
  shape === 'a'
    ? num('the share of the 40 bits the leak supports, 0 to 1', { minimum: 0, maximum: 1 })
    : int('how many of the 40 bits the leak supports', { minimum: 0, maximum: 40 });

const classification = nullable({
  type: 'string',
  enum: ['strong_match', 'weak_match', 'mixed_copy', 'no_match'],
  description: "mixed_copy (beside the spec's three): no single viewer explains the readings; nobody is named",
});
const probability = (description: string) => num(description, { minimum: 0, maximum: 1 });
const status = str('processing, completed or failed');

/** Shape A's flat chain; in a detail view and in an analysis alike. */
function chainA(): Schema {
  return object({
    organization: str(),
    viewer: uuid('the matched viewer'),
    wallet,
    content: str('the content title'),
    streamDate: time(),
    ipAddress: nullable(str()),
    confidence: num(),
  });
}

/** Shape B's nested chain; the case detail shows fewer session and viewer fields (spec section 2). */
function chainB(detail: boolean): Schema {
  const session = detail
    ? object({ id: uuid(), binaryId, bytesServed: int(), createdAt: time() })
    : object({ id: uuid(), binaryId, isActive: bool(), bytesServed: int(), createdAt: time(), expiresAt: time() });
  const viewer = detail
    ? object({ viewerId: uuid(), ipAddress: nullable(str()) })
    : object({ viewerId: uuid(), ipAddress: nullable(str()), userAgent: nullable(str()) });
  return object({
    apiKey: nullable(object({ id: uuid(), prefix: str(), name: str() })),
    organization: object({ id: uuid(), name: str(), email: nullable(str()) }),
    wallet: object({ address: wallet, hasOwnWallet: bool() }),
    session,
    viewer,
    content: object({ contentId: uuid(), contentType, title: str() }),
  });
}

const chain = (shape: ApiShape, detail: boolean) =>
  nullable({
    ...(shape === 'a' ? chainA() : chainB(detail)),
    description: 'null when no viewer of the asking organization is named',
  });

function caseFields(shape: ApiShape): Record<string, Schema> {
  return {
    id: uuid(),
    caseId: uuid(),
    contentId: uuid(),
    contentType,
    status,
    failureReason: nullable(str('only when status is failed')),
    progress: nullable(
      object(
        { stage: str('decoding, aligning, scoring frames, matching…'), done: num(), total: num() },
        [],
        'only while status is processing: what the analysis is doing, as its server ' +
          'or worker last wrote it (null before it starts)',
      ),
    ),
    binaryId: nullable(str("the leak's fingerprint; ? marks bits the leak does not decide")),
    confidence: nullable(confidence(shape)),
    classification,
    ...(shape === 'b' && {
      markProbability: nullable(probability('the mark figure (Shape B)')),
      identificationProbability: nullable(probability('the identification figure (Shape B)')),
    }),
    matchedOutsideOrganization: bool(
      "true when the best match is another organization's viewer, whom this view does not name",
    ),
    matchedViewer: nullable(uuid()),
    matchedViewerId: nullable(uuid()),
    matchedExternalViewerId: nullable(
      str("the organization's own name for the matched viewer (its viewerId, or its token's sub)"),
    ),
    matchedOrganization: nullable(str()),
    matchedIpAddress: nullable(str()),
    matchedWallet: nullable(str()),
    matchedSessionDate: nullable(time()),
    createdAt: time(),
    completedAt: nullable(time()),
  };
}

/** A candidate a weak result lists, or a suspect of a mixed copy: never a named viewer. */
const ListedCandidateFields = {
  viewerId: nullable(uuid('null for the plain copy served to unmarked sessions')),
  externalViewerId: nullable(str()),
  binaryId: nullable(binaryId),
  agreement: int('decided bits its id agrees with', { minimum: 0, maximum: 40 }),
  posterior: probability('its probability of being the source, were the copy from one viewer'),
  separatingSegments: nullable(
    int('further segments that would tell it apart from every other candidate that fits; null: more than 40'),
  ),
  evidence: object(
    {
      organization: object({ id: uuid(), name: str() }),
      apiKey: nullable(str('the key prefix')),
      walletAddress: wallet,
      sessionId: uuid(),
      sessionDate: time(),
      ipAddress: nullable(str()),
      userAgent: nullable(str()),
    },
    [],
    'a named colluder only: the session and its parties',
  ),
};
const LISTED_OPTIONAL = ['externalViewerId', 'evidence'];
const ListedCandidate = object(ListedCandidateFields, LISTED_OPTIONAL);

const Analysis = object({
  reason: nullable(str('why this classification, in one sentence')),
  markProbability: probability("the mark figure: the chance that a copy without this content's mark reads as strongly"),
  identificationProbability: nullable(
    probability(
      'the identification figure: the chance that an innocent viewer fits the ' +
        'decided bits (null for cases decided before it was computed)',
    ),
  ),
  strongBelow: nullable(num('the identification figure a strong match needed')),
  candidates: int(),
  decidedBits: nullable(int()),
  fitting: nullable(int('candidates whose ids agree with every decided bit')),
  candidateSet: arrayOf(ListedCandidate),
  candidatesOutsideOrganization: int('listed candidates and suspects of other organizations, not shown'),
  segmentsToSeparate: nullable(int()),
  segmentsToName: nullable(int()),
  mixedCopy: nullable(
    object({
      bothPositions: arrayOf(int('positions read A in one segment and B in another')),
      erasedPositions: arrayOf(int('positions whose mark was cancelled: an average of opposite marks')),
      leastSources: nullable(int()),
      coalitionsFound: int('coalitions of the least size that explain the readings (a lower bound unless exhaustive)'),
      exhaustive: nullable(bool('whether every such coalition was counted (null in cases decided before)')),
      inEveryCoalition: nullable(int('viewers in every one of them')),
      implicationProbability: nullable(
        probability('the chance that an innocent would be in every one of them (null where not computed)'),
      ),
      named: bool('the suspects are named: an averaged pair that innocents complete with chance at most strongBelow'),
      pairProbability: nullable(probability('the chance that an innocent completes the pair')),
      suspects: arrayOf(
        object(
          {
            ...ListedCandidateFields,
            bound: nullable(probability('were this viewer innocent, the chance of being in such a coalition')),
          },
          LISTED_OPTIONAL,
        ),
      ),
    }),
  ),
  matchesUnmarkedSessions: bool(),
  score: nullable(num()),
  contradictions: int(),
  segmentRule: { type: 'string', enum: ['fixed', 'keyed'], description: 'which bit of an id each segment carries' },
  segmentSeconds: {
    type: 'integer',
    enum: [2, 4, 6, 10],
    description: 'how long each of the content’s segments is, in seconds (one bit each)',
  },
  segments: arrayOf(
    object({
      index: int(),
      z: num(),
      bit: { type: 'string', enum: ['0', '1', '?'], description: 'the variant read: 0 for A, 1 for B' },
      position: int('the bit of the id this segment carries under the content’s rule'),
      flipped: bool('the rule serves that bit flipped here: 1 as A'),
      coverage: num(),
    }),
  ),
  alignment: { type: 'object', additionalProperties: { type: ['number', 'string', 'boolean'] } },
  seconds: num(),
});

function matchedSession(shape: ApiShape): Schema {
  return nullable(
    object({
      sessionId: uuid(),
      viewerId: uuid(),
      externalViewerId: str(),
      walletAddress: wallet,
      ipAddress: nullable(str()),
      streamDate: time(),
      sessionDate: time(),
      organization: str(),
      apiKey: nullable(str('the key prefix')),
      binaryId,
      confidence: confidence(shape),
    }),
  );
}

/** The case fields an analysis answer repeats (it names the viewer in matchedSession instead). */
const ANALYSIS_CASE_FIELDS = [
  'caseId',
  'status',
  'failureReason',
  'contentId',
  'contentType',
  'binaryId',
  'confidence',
  'classification',
  'markProbability',
  'identificationProbability',
  'matchedOutsideOrganization',
];

export function forensicSchemas(shape: ApiShape): Record<string, Schema> {
  const Case = object(caseFields(shape), ['failureReason', 'progress']);
  const detail = object({ analysis: ref('AnalysisNumbers') }, ['analysis']);
  const CaseDetail =
    shape === 'a'
      ? { allOf: [ref('Case'), detail, object({ evidenceChain: chain(shape, true) })] }
      : object({ case: { allOf: [ref('Case'), detail] }, evidenceChain: chain(shape, true) });
  const all = caseFields(shape);
  const own = Object.fromEntries(ANALYSIS_CASE_FIELDS.filter((k) => k in all).map((k) => [k, all[k] as Schema]));
  const AnalysisResult = object(
    {
      ...own,
      matchedSession: matchedSession(shape),
      evidenceChain: chain(shape, false),
      analysis: ref('AnalysisNumbers'),
    },
    ['failureReason', 'analysis'],
  );
  // The operator's views (admin API) say which organization opened the case (null: a local `drm analyze`).
  const asker = object({ organizationId: nullable(uuid()) });
  const OperatorCase = { allOf: [ref('Case'), asker] };
  const OperatorCaseDetail = { allOf: [ref('CaseDetail'), asker] };
  return { Case, CaseDetail, AnalysisResult, AnalysisNumbers: Analysis, OperatorCase, OperatorCaseDetail, ReportKey };
}

/** The key evidence reports are signed with, as src/report/signature.ts publishes it. */
const ReportKey = object({
  algorithm: { type: 'string', const: 'Ed25519' },
  publicKey: str('the raw 32-byte Ed25519 public key, hex', { pattern: '^[0-9a-f]{64}$' }),
  fingerprint: str(
    "the first 16 bytes of the key's SHA-256, hex in groups of four joined by colons; every report prints it",
    { pattern: '^[0-9a-f]{4}(:[0-9a-f]{4}){7}$' },
  ),
});
