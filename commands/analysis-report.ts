import type { AnalysisStage } from '../src/domain/forensics/analyze.js';
import { ID_BITS } from '../src/watermark/segments.js';
import { type Output, printJson, printTable } from './output.js';

// `drm analyze`'s output: the analyze response as JSON, or a summary and the evidence chain for
// people; and the exit code, which is the finding, for scripts.

/** 0 strong match, 2 weak match, 4 mixed copy, 3 no match; 1 any error (a failed case included), 130 cancelled. */
export const EXIT = { strong_match: 0, weak_match: 2, mixed_copy: 4, no_match: 3 } as const;
export const FAILED = 1;
export const CANCELLED = 130;

/** A body of the API (or analysisBody), read field by field. */
export type Json = { [key: string]: unknown };
export const obj = (v: unknown): Json | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
export const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;

export function exitFor(body: Json): number {
  if (body.status === 'failed') return FAILED;
  const c = body.classification;
  return typeof c === 'string' && Object.hasOwn(EXIT, c) ? EXIT[c as keyof typeof EXIT] : FAILED;
}

/**
 * Prints an analyze response (or a case detail, flattened) and returns the exit code of its finding.
 * `shapeA` is known locally; from a server it is read off the evidence chain (A names its parties as strings).
 */
export function printAnalysis(out: Output, body: Json, shapeA?: boolean): number {
  const code = exitFor(body);
  if (out.json) {
    printJson(out, body);
    if (body.status === 'failed')
      out.error(`drm: case ${text(body.caseId) ?? ''} failed: ${text(body.failureReason) ?? 'no reason given'}`);
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
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const mark = num(analysis?.markProbability) ?? num(analysis?.falsePositiveProbability);
  const identification = num(analysis?.identificationProbability);
  const candidates = num(analysis?.candidates);

  out.write(`case ${caseId}: ${text(body.classification) ?? 'undecided'}`);
  if (text(analysis?.reason)) out.write(`  ${text(analysis?.reason)}`);
  out.write(`  binaryId        ${text(body.binaryId) ?? '-'}`);
  out.write(
    `  confidence      ${bits} of ${ID_BITS} bits ${body.classification === 'strong_match' ? 'supported' : 'decided'}`,
  );
  if (mark !== undefined)
    out.write(
      `  mark            ${scientific(mark)} (chance that a copy without this content's mark reads as strongly)`,
    );
  if (identification !== undefined) {
    const among = candidates === undefined ? '' : `, ${candidates} candidate${candidates === 1 ? '' : 's'}`;
    const figure = identification === 0 ? '0' : scientific(identification);
    out.write(`  identification  ${figure} (chance that an innocent viewer fits the decided bits${among})`);
  }
  const rows = evidenceRows(body, chain);
  if (rows) printTable(out, ['field', 'value'], rows);
  else out.write('no viewer named');
  printCandidates(out, analysis);
  const segments = Array.isArray(analysis?.segments)
    ? (analysis.segments as unknown[]).map(obj).filter((s) => s !== undefined)
    : [];
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

/** How many coalitions explain a mixed copy, and whom that implicates. */
function implicatedLine(mixed: Json, suspects: number): string {
  const atLeast = mixed.exhaustive === false ? 'at least ' : '';
  const count = `${atLeast}${text(mixed.coalitionsFound) ?? '?'} coalition(s) fit`;
  const figure =
    typeof mixed.implicationProbability === 'number' ? mixed.implicationProbability.toExponential(1) : null;
  if (mixed.named === true) return `${count}; the two viewers named:`;
  if (suspects > 0) return `${count}; in every one (an innocent would be with chance ≤ ${figure ?? '?'}), suspects:`;
  if (mixed.exhaustive === false) return `${count}, not all counted; nobody is a suspect`;
  if (typeof mixed.inEveryCoalition === 'number' && mixed.inEveryCoalition > 0)
    return (
      `${count}; ${mixed.inEveryCoalition} viewer(s) in every one, but an innocent would be with chance ` +
      `≤ ${figure ?? '?'}: nobody is a suspect`
    );
  return `${count}; no viewer is in every one: nobody is a suspect`;
}

/**
 * A weak result's candidate set, or a mixed copy's suspects: who fits, and how many more segments would tell them
 * apart.
 */
function printCandidates(out: Output, analysis: Json | undefined): void {
  const mixed = obj(analysis?.mixedCopy);
  const list = (mixed ? mixed.suspects : analysis?.candidateSet) as unknown;
  const entries = Array.isArray(list) ? list.map(obj).filter((c) => c !== undefined) : [];
  const outside =
    typeof analysis?.candidatesOutsideOrganization === 'number' ? analysis.candidatesOutsideOrganization : 0;
  if (mixed) {
    const both =
      Array.isArray(mixed.bothPositions) && mixed.bothPositions.length > 0
        ? `, positions read both ways: ${mixed.bothPositions.join(', ')}`
        : '';
    const erased =
      Array.isArray(mixed.erasedPositions) && mixed.erasedPositions.length > 0
        ? `, marks cancelled at: ${mixed.erasedPositions.join(', ')}`
        : '';
    out.write(`mixed copy: at least ${text(mixed.leastSources) ?? 'more than 3'} sources${both}${erased}`);
    out.write(`  ${implicatedLine(mixed, entries.length)}`);
  } else if (entries.length > 0) {
    const fitting = text(analysis?.fitting) ?? String(entries.length);
    const apart =
      typeof analysis?.segmentsToSeparate === 'number'
        ? `; ${analysis.segmentsToSeparate} more segments would separate them`
        : '';
    out.write(
      `${fitting} candidate(s) fit the ${text(analysis?.decidedBits) ?? '?'} decided bits${apart}; nobody is named:`,
    );
  }
  if (entries.length > 0) {
    const rows = entries.map((c) => [
      c.unmarkedSessions ? '(the unmarked copy)' : (text(c.externalViewerId) ?? text(c.viewerId) ?? '?'),
      text(c.viewerId) ?? '-',
      text(c.agreement) ?? '?',
      typeof c.posterior === 'number' ? c.posterior.toPrecision(2) : '?',
      mixed ? (typeof c.bound === 'number' ? c.bound.toPrecision(2) : '-') : (text(c.separatingSegments) ?? '> 40'),
    ]);
    const last = mixed ? 'own bound' : 'segments to separate';
    printTable(out, ['viewer', 'id', 'bits fit', 'posterior', last], rows);
  }
  if (outside > 0) out.write(`${outside} more of other organizations, not shown`);
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
  // the analyze response names it in matchedSession, a case detail (--server, polled) beside the case's fields
  const external = text(m?.externalViewerId) ?? text(body.matchedExternalViewerId);
  const address = text(wallet?.address) ?? text(m?.walletAddress) ?? text(chain?.wallet) ?? text(body.matchedWallet);
  const sessionId = text(m?.sessionId) ?? text(session?.id);
  const created =
    text(session?.createdAt) ?? text(m?.streamDate) ?? text(chain?.streamDate) ?? text(body.matchedSessionDate);
  const bytes =
    typeof session?.bytesServed === 'number'
      ? `${session.bytesServed.toLocaleString('en-US')} bytes served`
      : undefined;

  const rows: Array<[string, string | undefined]> = [
    [
      'organization',
      org
        ? `${text(org.name) ?? ''} (${text(org.id) ?? '?'})`
        : (text(chain?.organization) ?? text(m?.organization) ?? text(body.matchedOrganization)),
    ],
    ['API key', key ? `${text(key.prefix) ?? '?'} (${text(key.name) ?? 'unnamed'})` : text(m?.apiKey)],
    // The organization's own name for the viewer is what its investigator knows; the platform's id follows it.
    ['viewer', external && external !== viewerId ? `${external} (platform id ${viewerId ?? '?'})` : viewerId],
    [
      'wallet',
      address &&
        (wallet && typeof wallet.hasOwnWallet === 'boolean'
          ? `${address} (own wallet: ${wallet.hasOwnWallet ? 'yes' : 'no'})`
          : address),
    ],
    ['session', sessionId && [sessionId, created && `created ${created}`, bytes].filter(Boolean).join(', ')],
    [
      'IP address',
      text(m?.ipAddress) ?? text(viewer?.ipAddress) ?? text(chain?.ipAddress) ?? text(body.matchedIpAddress),
    ],
    ['user agent', text(viewer?.userAgent)],
    [
      'content',
      content
        ? `${text(content.title) ?? ''} (${text(content.contentId) ?? '?'}, ${text(content.contentType) ?? '?'})`
        : (text(chain?.content) ?? text(body.contentId)),
    ],
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
