import type { CaseRow } from '../db/repos/index.js';
import type { Evidence } from '../domain/forensics/report.js';
import type { Visible } from '../present/forensics.js';
import { byteSize, duration, type Html, html, NOT_RECORDED, utc } from './html.js';
import { DEFAULT_SEGMENT_SECONDS } from '../watermark/segment-rule.js';

/** What a report is rendered from: the stored case as its reader may see it, and when and by what. */
export interface ReportInput {
  row: CaseRow;
  visible: Visible;
  /** the content as the catalog has it now; title null when it is no longer there */
  content: { id: string; type: string; title: string | null };
  generatedAt: number;
  /** the software rendering the report, e.g. "drm 0.1.0" */
  software: string;
  /** who opened the case: an organization and its key, or null for the platform operator */
  requestedBy?: { organization: { id: string; name: string }; key: { name: string; prefix: string } | null } | null;
  /** the deployment's public key that signs the report (hex) */
  signingKey?: string;
  /** until when the deployment keeps the leak (null: it no longer does) */
  leakKeptUntil?: number | null;
}

const rows = (pairs: Array<[string, unknown]>) => {
  const cells = pairs.map(([k, v]) => html`<tr><th scope="row">${k}</th><td>${v}</td></tr>`);
  return html`<table class="facts"><tbody>${cells}</tbody></table>`;
};

const code = (v: string | null | undefined) => (v ? html`<code>${v}</code>` : NOT_RECORDED);

/** How long each of the content's segments is (reports made before lengths varied: 10 s). */
export const segmentSecondsOf = (input: ReportInput): number =>
  input.visible.report?.segmentSeconds ?? DEFAULT_SEGMENT_SECONDS;

export function contentName(input: ReportInput): Html {
  const { content } = input;
  const gone = html`<span class="missing">no longer in the catalog</span>`;
  const title = content.title ? html`“${content.title}”` : gone;
  return html`${title} (${content.type}, id <code>${content.id}</code>)`;
}

/** Who opened the case: the organization and the name of its key, or the operator. */
function requester(input: ReportInput): Html | string {
  const { row, requestedBy } = input;
  if (!row.organizationId) return 'the platform operator (drm analyze on the data directory)';
  if (!requestedBy) return html`organization <code>${row.organizationId}</code>`;
  const key = requestedBy.key
    ? html`, with its API key “${requestedBy.key.name}” (<code>${requestedBy.key.prefix}…</code>)`
    : '';
  return html`${requestedBy.organization.name} (organization <code>${requestedBy.organization.id}</code>)${key}`;
}

/** The case as a record: who asked, when it was opened and decided, by which software. */
export function caseSection(input: ReportInput): Html {
  const { row, visible } = input;
  const leak = visible.report?.leak;
  return html`<section><h2>The case</h2>${rows([
    ['Case', code(row.id)],
    ['Status', row.status],
    ['Finding', row.classification ? row.classification.replace('_', ' ') : '—'],
    ['Content', contentName(input)],
    ['Requested by', requester(input)],
    ['Opened', utc(row.createdAt)],
    ['Analysis finished', utc(row.completedAt)],
    ['Analysis took', visible.report ? `${visible.report.seconds} s` : '—'],
    ['Analysed by', leak?.software ?? NOT_RECORDED],
    ['Report rendered', html`${utc(input.generatedAt)} by ${input.software}`],
  ])}</section>`;
}

/** Where the file itself is: kept by the deployment until a date, or deleted. */
function custody(input: ReportInput): Html | string {
  if (input.leakKeptUntil === undefined) return '';
  if (input.leakKeptUntil === null)
    return 'The deployment no longer keeps the file: it is deleted once its retention period ends.';
  return html`The deployment keeps the file in its store until ${utc(input.leakKeptUntil)}, then deletes it; until then
    the operator can produce it.`;
}

/** The file that was analysed, identified so that anyone can check it is the same one. */
export function leakSection(input: ReportInput): Html {
  const { row, visible } = input;
  const leak = visible.report?.leak;
  return html`<section><h2>The leaked file</h2>${rows([
    ['Name as submitted', row.uploadName ?? NOT_RECORDED],
    ['SHA-256', code(leak?.sha256)],
    ['Size', byteSize(leak?.bytes ?? row.uploadBytes)],
    ['Duration', duration(leak?.durationSeconds)],
    ['Analysed', utc(leak?.analysedAt ?? row.completedAt)],
  ])}<p class="note">The SHA-256 digest identifies the file exactly: computing it again (for example with
  <code>sha256sum</code>) over a copy proves the copy is the file analysed here, bit for bit.
  ${custody(input)}</p></section>`;
}

function walletText(e: Evidence): Html {
  const whose = e.wallet.hasOwnWallet ? 'the viewer’s own wallet' : 'a wallet the service issued to the viewer';
  return html`<code>${e.wallet.address}</code> (${whose})`;
}

/**
 * The chain from the leak to a person, in the order the spec names it: API key, organization,
 * wallet, session, viewer, IP address, date. As it was when the case was decided: later changes
 * (a rotated key, an ended session) do not alter it.
 */
export function chainSection(input: ReportInput): Html {
  const { visible } = input;
  const e = visible.evidence;
  let body: Html;
  if (e) {
    body = rows(chainRows(e));
  } else if (visible.matchedOutsideOrganization) {
    body = html`<p>The best match is a viewer of <strong>another organization</strong>. Identities of other
    organizations’ viewers are not shown to this organization; the platform operator holds the full record of this
    case.</p>`;
  } else {
    body = html`<p>No viewer is named, so there is no chain to show.</p>`;
  }
  return html`<section class="keep"><h2>Evidence chain</h2>${body}</section>`;
}

/** The chain's rows for a viewer the reader may see. */
function chainRows(e: Evidence): Array<[string, unknown]> {
  const email = e.organization.email ? html`, ${e.organization.email}` : '';
  const served = byteSize(e.session.bytesServed);
  return [
    [
      'API key',
      e.apiKey
        ? html`<code>${e.apiKey.prefix}…</code> “${e.apiKey.name}” (id <code>${e.apiKey.id}</code>)`
        : NOT_RECORDED,
    ],
    ['Organization', html`${e.organization.name} (id <code>${e.organization.id}</code>${email})`],
    ['Wallet', walletText(e)],
    [
      'Session',
      html`<code>${e.session.id}</code>: started ${utc(e.session.createdAt)}, valid until
        ${utc(e.session.expiresAt)}, ${served} served`,
    ],
    [
      'Viewer',
      html`“${e.viewer.externalViewerId}” as the organization calls them (viewer id
        <code>${e.viewer.viewerId}</code>)`,
    ],
    ['Viewer’s permanent id', html`<code class="bits">${e.session.binaryId}</code> (40 bits)`],
    ['IP address', e.viewer.ipAddress ?? NOT_RECORDED],
    ['User agent', e.viewer.userAgent ?? NOT_RECORDED],
    ['Date', html`the session started ${utc(e.session.createdAt)}`],
    [
      'Sessions of this content',
      `${e.viewerSessions} (every one carries the same mark; the session above received the most)`,
    ],
  ];
}
