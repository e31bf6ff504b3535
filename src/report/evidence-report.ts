import type { Context } from '../context.js';
import type { CaseRow } from '../db/repos/index.js';
import { type Audience, visibleTo } from '../present/forensics.js';
import { softwareVersion } from '../version.js';
import { storedFrames } from '../domain/forensics/cases.js';
import { leakKeptUntil } from '../domain/forensics/leak-retention.js';
import { Html, html } from './html.js';
import { caseSection, chainSection, leakSection, type ReportInput } from './report-facts.js';
import { findingSection, framesSection, readingSection } from './report-finding.js';
import { methodSection, segmentsAppendix } from './report-method.js';
import { REPORT_CSS } from './report-style.js';
import { keyFingerprint, SIGNATURE_SLOT, signReport } from './signature.js';

export type { ReportInput } from './report-facts.js';

/**
 * A forensic case as one self-contained HTML document an investigator can hand on: no scripts,
 * no links to fetch, pictures inline. Its reader sees what `audience` may see through the API
 * (an organization never the identities behind another organization's viewer).
 */
export function renderEvidenceReport(input: ReportInput): string {
  const { row } = input;
  const title = `Forensic evidence report, case ${row.id}`;
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="${input.software}">
<title>${title}</title>
<style>${new Html(REPORT_CSS)}</style>
</head>
<body>
<main>
<header>
<div class="kicker">Forensic watermark analysis</div>
<h1>Evidence report</h1>
<div class="sub">Case <code>${row.id}</code>${input.content.title ? html` · “${input.content.title}”` : ''}</div>
</header>
${findingSection(input)}
${caseSection(input)}
${leakSection(input)}
${chainSection(input)}
${readingSection(input)}
${framesSection(input)}
${methodSection(input)}
${segmentsAppendix(input)}
<footer>This document renders forensic case ${row.id} as the service stored it when the analysis ended; the same
figures are in the case record (GET /api/v1/forensics/cases/${row.id}). Rendered by ${input.software}.
${signatureNote(input)}</footer>
</main>
</body>
</html>
${new Html(SIGNATURE_SLOT)}
`;
  return page.text;
}

/** How a reader checks that the document is the one the deployment issued. */
function signatureNote(input: ReportInput): Html {
  if (!input.signingKey) return html``;
  return html`<p class="signature">The deployment signs this file: a comment at its very end holds the SHA-256 of the
file (with that comment emptied to <code>${SIGNATURE_SLOT}</code>) and an Ed25519 signature of it by the key
<code class="bits">${input.signingKey}</code> (fingerprint <code>${keyFingerprint(input.signingKey)}</code>).
<code>drm cases verify</code> checks both; changing any byte of the report breaks them.</p>`;
}

/** Who opened a case, as its report names them. */
async function requesterOf(ctx: Context, row: CaseRow): Promise<ReportInput['requestedBy']> {
  if (!row.organizationId) return null;
  const [org, key] = await Promise.all([
    ctx.repos.organizations.find(row.organizationId),
    row.apiKeyId ? ctx.repos.apiKeys.find(row.apiKeyId) : undefined,
  ]);
  if (!org) return null;
  return { organization: { id: org.id, name: org.name }, key: key ? { name: key.name, prefix: key.prefix } : null };
}

/** The report of a stored case for `audience`, with the content as the catalog has it now, signed by the deployment. */
export async function evidenceReport(ctx: Context, row: CaseRow, audience: Audience): Promise<string> {
  const content = await ctx.repos.content.find(row.contentId);
  const visible = visibleTo(row, audience);
  const frames = storedFrames(row);
  if (visible.report?.leak && frames) visible.report.leak.frames = frames;
  const page = renderEvidenceReport({
    row,
    visible,
    content: { id: row.contentId, type: content?.type ?? row.contentType, title: content?.title ?? null },
    generatedAt: ctx.clock.now(),
    software: softwareVersion(),
    requestedBy: await requesterOf(ctx, row),
    leakKeptUntil: leakKeptUntil(ctx, row),
    signingKey: ctx.keys.reports.publicKey,
  });
  return signReport(page, ctx.keys.reports);
}

/** Headers that keep the report inert when opened from the server: nothing loads, nothing runs. */
export const REPORT_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; img-src data:; style-src 'unsafe-inline'",
  'x-content-type-options': 'nosniff',
} as const;

export const reportFileName = (row: CaseRow) => `case-${row.id}.html`;
