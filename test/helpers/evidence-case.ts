import type { CaseRow } from '../../src/db/repos/index.js';
import type { Evidence, ForensicReport } from '../../src/domain/forensics/report.js';

// A forensic case as analysis stores it, made up: the evidence report and its endpoint are
// tested on these without ingesting and analysing a film (test/e2e/analyze-cli.test.ts does that).

export const BITS = '0110100111010010110010100111001011010011';

/** A grey 8×8 JPEG, as a data: URI. */
export const TINY_JPEG =
  'data:image/jpeg;base64,/9j/4AAQSkZJRgABAgAAAQABAAD//gAQTGF2YzU5LjM3LjEwMAD/2wBDAAgUFBcUFxsbGxsbGyAeICEhISAgICAhISEkJCQqKiokJCQhISQkKCgqKi4vLisrKisvLzIyMjw8OTlGRkhWVmf/xABKAAEAAAAAAAAAAAAAAAAAAAAAAQEAAAAAAAAAAAAAAAAAAAAAEAEAAAAAAAAAAAAAAAAAAAAAEQEAAAAAAAAAAAAAAAAAAAAA/8AAEQgACAAIAwEiAAIRAAMRAP/aAAwDAQACEQMRAD8AAA//2Q==';

export function sampleEvidence(fields: { organizationId: string; title?: string; userAgent?: string }): Evidence {
  return {
    apiKey: { id: 'key-1', prefix: 'drm_live_abc', name: 'investigations' },
    organization: { id: fields.organizationId, name: 'Acme Films', email: 'ops@acme.test' },
    wallet: { address: '0x1111111111111111111111111111111111111111', hasOwnWallet: false },
    session: {
      id: 'session-1',
      binaryId: BITS,
      isActive: false,
      bytesServed: 12_345_678,
      createdAt: Date.UTC(2025, 0, 2, 10),
      expiresAt: Date.UTC(2025, 0, 2, 14),
    },
    viewer: {
      viewerId: 'viewer-1',
      externalViewerId: 'alice',
      ipAddress: '203.0.113.7',
      userAgent: fields.userAgent ?? 'Mozilla/5.0',
    },
    content: { contentId: 'content-1', contentType: 'video', title: fields.title ?? 'Pan' },
    viewerSessions: 1,
  };
}

/** A strong match over segments 0..5, each read the way BITS says, with the leak's facts recorded. */
export function sampleReport(evidence: Evidence | null, options: { leak?: boolean } = {}): ForensicReport {
  const segments = Array.from({ length: 6 }, (_, index) => {
    const z = (BITS[index] === '0' ? 1 : -1) * (index === 4 ? 2.5 : 9 + index);
    return { index, z, bit: (Math.abs(z) >= 4 ? BITS[index] : '?') as '0' | '1' | '?', coverage: 10 };
  });
  return {
    classification: evidence ? 'strong_match' : 'no_match',
    binaryId: BITS,
    readout: `${BITS.slice(0, 4)}?${BITS[5]}${'?'.repeat(34)}`,
    supportedBits: 5,
    markProbability: 3.2e-14,
    identificationProbability: 0,
    strongBelow: 1e-6,
    decidedBits: 5,
    fitting: 1,
    candidateSet: [],
    reason: 'the one viewer who streamed this content marked fits all 5 decided bits',
    candidates: 1,
    score: 24.1,
    contradictions: 0,
    detection: { segments, alignment: { offsetSeconds: 7, timeCorrelation: 0.98 } },
    evidence,
    seconds: 12.3,
    ...(options.leak !== false && {
      leak: {
        sha256: 'ab'.repeat(32),
        bytes: 4_321_000,
        durationSeconds: 52.04,
        analysedAt: Date.UTC(2025, 0, 3, 9),
        software: 'drm 0.1.0',
        frames: [{ segment: 1, leakSeconds: 8, originalSeconds: 15, leak: TINY_JPEG, original: TINY_JPEG }],
      },
    }),
  };
}

export function sampleCase(fields: {
  id: string;
  organizationId: string | null;
  report: ForensicReport | null;
  contentId?: string;
}): CaseRow {
  const { report } = fields;
  return {
    id: fields.id,
    organizationId: fields.organizationId,
    apiKeyId: null,
    contentId: fields.contentId ?? 'content-1',
    contentType: 'video',
    status: report ? 'completed' : 'failed',
    failureReason: report ? null : 'analysis failed: internal error',
    uploadPath: null,
    uploadName: 'leak <b>.mp4',
    uploadBytes: 4_321_000,
    attempts: 1,
    leaseUntil: null,
    leasedBy: null,
    classification: report?.classification ?? null,
    binaryId: report?.binaryId ?? null,
    supportedBits: report?.supportedBits ?? null,
    matchedViewerId: report?.evidence?.viewer.viewerId ?? null,
    matchedSessionId: report?.evidence?.session.id ?? null,
    report: report ? JSON.stringify(report) : null,
    progress: null,
    leakFrames: null,
    createdAt: Date.UTC(2025, 0, 3, 8),
    completedAt: Date.UTC(2025, 0, 3, 9),
  };
}

/** A listed candidate: a viewer of `organizationId` who fits every decided bit. */
export function sampleCandidate(
  viewerId: string,
  externalViewerId: string,
  organizationId: string,
  separatingSegments: number | null,
) {
  return {
    viewerId,
    externalViewerId,
    organizationId,
    binaryId: BITS,
    agreement: 5,
    posterior: 1 / 3,
    separatingSegments,
  };
}

/** A weak result: three viewers (two of ORG, one of another organization) fit the 5 decided bits, nobody is named. */
export function sampleWeakReport(organizationId: string): ForensicReport {
  return {
    ...sampleReport(null),
    classification: 'weak_match',
    binaryId: `${BITS.slice(0, 4)}?${BITS[5]}${'?'.repeat(34)}`,
    identificationProbability: 0.41,
    candidates: 140,
    fitting: 3,
    candidateSet: [
      sampleCandidate('viewer-1', 'alice', organizationId, 2),
      sampleCandidate('viewer-2', 'bob', organizationId, 2),
      sampleCandidate('viewer-9', 'mallory', 'org-elsewhere', 1),
    ],
    segmentsToSeparate: 2,
    segmentsToName: 19,
    reason: '3 candidates fit all 5 decided bits: nobody is named',
  };
}

/** A mixed copy: position 3 read both ways, two suspects. */
export function sampleMixedReport(organizationId: string): ForensicReport {
  return {
    ...sampleReport(null),
    classification: 'mixed_copy',
    identificationProbability: 0.02,
    candidates: 140,
    fitting: 0,
    mixed: {
      bothPositions: [3],
      erasedPositions: [],
      named: false,
      pairProbability: null,
      leastSources: 2,
      coalitionsFound: 1,
      exhaustive: true,
      inEveryCoalition: 2,
      implicationProbability: 4.2e-5,
      suspects: [
        { ...sampleCandidate('viewer-1', 'alice', organizationId, null), bound: 2.1e-6 },
        { ...sampleCandidate('viewer-2', 'bob', organizationId, null), bound: 2.1e-6 },
      ],
    },
    reason: '1 bit position(s) read both ways: the copy was mixed from at least 2 viewers; nobody is named',
  };
}
