import type { AnalysisStage } from '../src/domain/forensics/analyze.js';
import { ID_BITS } from '../src/watermark/segments.js';
import { type Output, printJson, printTable } from './output.js';

// `drm analyze`'s output: the analyze response as JSON, or a summary and the evidence chain for
// people; and the exit code, which is the finding, for scripts.

/** 0 strong match, 2 weak match, 3 no match; 1 any error (a failed case included), 130 cancelled. */
export const EXIT = { strong_match: 0, weak_match: 2, no_match: 3 } as const;
export const FAILED = 1;
export const CANCELLED = 130;

/** A body of the API (or analysisBody), read field by field. */
export type Json = { [key: string]: unknown };
export const obj = (v: unknown): Json | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
export const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);


export function exitFor(body: Json): number {
  if (body.status === 'failed') return FAILED;
  const c = body.classification;
  return c === 'strong_match' || c === 'weak_match' || c === 'no_match' ? EXIT[c] : FAILED;
}

/**
 * Prints an analyze response (or a case detail, flattened) and returns the exit code of its finding.
 * `shapeA` is known locally; from a server it is read off the evidence chain (A names its parties as strings).
 */
export function printAnalysis(out: Output, body: Json, shapeA?: boolean): number {
  const code = exitFor(body);
  if (out.json) {
    printJson(out, body);
    if (body.status === 'failed') out.error(`drm: case ${text(body.caseId) ?? ''} failed: ${text(body.failureReason) ?? 'no reason given'}`);
    return code;
  }
  const caseId = text(body.caseId) ?? text(body.id) ?? '?';
  if (body.status === 'failed') {
    out.error(`drm: case ${caseId} failed: ${text(body.failureReason) ?? 'no reason given'}`);
    return FAILED;
  }
  const chain = obj(body.evidenceChain);
  const a = shapeA ?? typeof chain?.organization === 'string';
  const analysis = obj(body.analysis);
  const confidence = typeof body.confidence === 'number' ? body.confidence : 0;
  const bits = a ? Math.round(confidence * ID_BITS) : confidence;
  const fp = typeof analysis?.falsePositiveProbability === 'number' ? analysis.falsePositiveProbability : undefined;
  const confusion = typeof analysis?.confusionProbability === 'number' ? analysis.confusionProbability : undefined;
  const candidates = typeof analysis?.candidates === 'number' ? analysis.candidates : undefined;

  out.write(`case ${caseId}: ${text(body.classification) ?? 'undecided'}`);
  out.write(`  binaryId        ${text(body.binaryId) ?? '-'}`);
  out.write(`  confidence      ${bits} of ${ID_BITS} bits supported`);
  if (fp !== undefined) {
    const others =
      candidates === 1 ? '1 candidate, no other viewer to confuse with' : `${candidates ?? '?'} candidates, confusion with another viewer ${confusion === undefined ? '?' : scientific(confusion)}`;
    out.write(`  false positive  ${scientific(fp)} (${others})`);
  }
  const rows = evidenceRows(body, chain);
  if (rows) printTable(out, ['field', 'value'], rows);
  else out.write('no viewer named');
  const segments = Array.isArray(analysis?.segments) ? (analysis.segments as unknown[]).map(obj).filter((s) => s !== undefined) : [];
  if (segments.length > 0) {
    out.write(
      segments
        .map((s) => {
          const z = typeof s.z === 'number' ? s.z.toFixed(1) : '?';
          const variant = s.bit === '0' ? 'A' : s.bit === '1' ? 'B' : '?';
          return `seg ${text(s.index) ?? '?'}: z ${z} (${variant})`;
        })
        .join(', '),
    );
  }
  const unmatched = text(obj(analysis?.alignment)?.unmatched);
  if (unmatched) out.write(`the leak does not line up with the content: ${unmatched}`);
  return code;
}

function scientific(p: number): string {
  if (p === 0) return '< 1e-300';
  if (p === 1) return '1';
  return p.toExponential(1);
}

/**
 * The evidence chain as field / value rows, from either shape: B's chain names every party as an
 * object, A's as strings; the analyze response's matchedSession (and a case detail's matched*
 * fields) fill in the rest. Null when no viewer is named.
 */
function evidenceRows(body: Json, chain: Json | undefined): string[][] | null {
  const m = obj(body.matchedSession);
  if (!m && !chain) return null;
  const org = obj(chain?.organization);
  const key = obj(chain?.apiKey);
  const wallet = obj(chain?.wallet);
  const session = obj(chain?.session);
  const viewer = obj(chain?.viewer);
  const content = obj(chain?.content);

  const viewerId = text(m?.viewerId) ?? text(viewer?.viewerId) ?? text(chain?.viewer) ?? text(body.matchedViewerId);
  const external = text(m?.externalViewerId);
  const address = text(wallet?.address) ?? text(m?.walletAddress) ?? text(chain?.wallet) ?? text(body.matchedWallet);
  const sessionId = text(m?.sessionId) ?? text(session?.id);
  const created = text(session?.createdAt) ?? text(m?.streamDate) ?? text(chain?.streamDate) ?? text(body.matchedSessionDate);
  const bytes = typeof session?.bytesServed === 'number' ? `${session.bytesServed.toLocaleString('en-US')} bytes served` : undefined;

  const rows: Array<[string, string | undefined]> = [
    ['organization', org ? `${text(org.name) ?? ''} (${text(org.id) ?? '?'})` : (text(chain?.organization) ?? text(m?.organization) ?? text(body.matchedOrganization))],
    ['API key', key ? `${text(key.prefix) ?? '?'} (${text(key.name) ?? 'unnamed'})` : text(m?.apiKey)],
    ['viewer', viewerId && (external && external !== viewerId ? `${viewerId} (external id ${external})` : viewerId)],
    ['wallet', address && (wallet && typeof wallet.hasOwnWallet === 'boolean' ? `${address} (own wallet: ${wallet.hasOwnWallet ? 'yes' : 'no'})` : address)],
    ['session', sessionId && [sessionId, created && `created ${created}`, bytes].filter(Boolean).join(', ')],
    ['IP address', text(m?.ipAddress) ?? text(viewer?.ipAddress) ?? text(chain?.ipAddress) ?? text(body.matchedIpAddress)],
    ['user agent', text(viewer?.userAgent)],
    ['content', content ? `${text(content.title) ?? ''} (${text(content.contentId) ?? '?'}, ${text(content.contentType) ?? '?'})` : (text(chain?.content) ?? text(body.contentId))],
  ];
  return rows.filter((r): r is [string, string] => r[1] !== undefined && r[1] !== '');
}

/** The progress line's words for each stage of an analysis, and what its counts count. */
export function stageOf(stage: AnalysisStage, contentType: string | undefined): { label: string; unit?: string } {
  if (stage === 'decode') return { label: 'decoding the leak', unit: 'frames' };
  if (stage === 'align') return { label: 'aligning the leak with the original', unit: 'steps' };
  if (stage === 'score') return { label: 'reading the mark', unit: contentType === 'music' ? 's of media' : 'frames' };
  return { label: 'matching against the viewers who streamed it' };
}
