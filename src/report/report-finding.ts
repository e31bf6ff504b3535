import { DECIDED_Z } from '../domain/forensics/matching/matching.js';
import { ID_BITS, readOut } from '../watermark/segments.js';
import { FIXED_RULE } from '../watermark/segment-rule.js';
import { atMost, type Html, html, utc } from './html.js';
import { contentName, type ReportInput, segmentSecondsOf } from './report-facts.js';
import { chanceParagraph, innocentChance, verdictDetails } from './report-verdict.js';
import { AGREEMENT_COLOUR, segmentPlot } from './segment-plot.js';

/** The finding in a few sentences, first on the page: what a reader who reads nothing else must know. */
export function findingSection(input: ReportInput): Html {
  const { row, visible } = input;
  const report = visible.report;
  const e = visible.evidence;
  const unmatched = report?.detection.alignment.unmatched;
  let text: Html;
  if (row.status === 'processing')
    text = html`The analysis has <strong>not finished</strong>: this report is preliminary and states no finding.`;
  else if (row.status === 'failed' || !report)
    text = html`The analysis <strong>failed</strong>: ${row.failureReason ?? 'no reason was recorded'}. It states no
      finding.`;
  else if (typeof unmatched === 'string')
    text = html`<strong>No match.</strong> The leak does not line up with ${contentName(input)}: ${unmatched}.`;
  else if (e && row.classification === 'strong_match') {
    text = html`<strong>Strong match.</strong> The leaked copy of ${contentName(input)} carries the watermark of the
      viewer “${e.viewer.externalViewerId}” of ${e.organization.name}, who streamed it in session
      <code>${e.session.id}</code> starting ${utc(e.session.createdAt)} from the IP address
      ${e.viewer.ipAddress ?? '(not recorded)'}. The chance that an innocent viewer fits the leak this well is
      ${innocentChance(report.identificationProbability)}.`;
  } else if (e) {
    // a case decided before weak results stopped naming anyone
    text = html`<strong>Weak match</strong> (a lead, not proof): the best fit was the viewer
      “${e.viewer.externalViewerId}” of ${e.organization.name}.`;
  } else if (visible.matchedOutsideOrganization) {
    text = html`<strong>Strong match</strong> with a viewer of another organization, whose identity is not shown here.`;
  } else if (report.matchesUnmarkedSessions) {
    text = html`<strong>No match.</strong> The leak reads as variant A throughout, as served to sessions whose license
      had watermarking turned off: it was taken from such a session, and nobody can be named.`;
  } else if (row.classification === 'weak_match') {
    text = html`<strong>Weak match: nobody is named.</strong> ${report.fitting ?? 'Several'} viewer(s) fit the
      ${report.decidedBits ?? ''} bits the leak decides, and the chance that an innocent viewer would fit them is
      ${innocentChance(report.identificationProbability)}, too high to name anyone. The candidates are listed below.`;
  } else if (row.classification === 'mixed_copy' && report.mixed?.named) {
    text = html`<strong>Mixed copy: two viewers named.</strong> The leaked copy of ${contentName(input)} is an average
      of the copies of two viewers, who are listed below with their sessions. The chance that an innocent viewer
      completes such a pair is ${atMost(report.mixed.pairProbability ?? 1)}.`;
  } else if (row.classification === 'mixed_copy') {
    const sources = report.mixed?.leastSources ? html`at least ${report.mixed.leastSources}` : 'more than three';
    text = html`<strong>Mixed copy: nobody is named.</strong> No single viewer’s copy explains what the leak reads: it
      was put together from the copies of ${sources} viewers. The suspects are listed below.`;
  } else
    text = html`<strong>No match.</strong> The leak does not carry the mark of any viewer who streamed
      ${contentName(input)} clearly enough to name anyone.`;
  return html`<section class="finding ${row.classification ?? row.status}"><h2>Finding</h2><p>${text}</p></section>`;
}

/** The 40 bits as the leak reads them beside the named viewer's id, one cell each. */
function bitGrid(readout: string, viewerBits: string): Html {
  const cells = Array.from({ length: ID_BITS }, (_, b) => {
    const r = readout[b] ?? '?';
    const v = viewerBits[b] ?? '?';
    const cls = r === '?' ? 'unread' : r === v ? 'agree' : 'disagree';
    return html`<td class="${cls}"><span class="pos">${b}</span>${r}<br>${v}</td>`;
  });
  const head = html`<th scope="row">bit<br>leak<br>viewer</th>`;
  return html`<table class="bitgrid"><tbody><tr>${head}${cells}</tr></tbody></table>`;
}

const bitFigure = (readout: string, viewerBits: string) =>
  html`<figure class="keep">${bitGrid(readout, viewerBits)}<figcaption>The 40 bits of the viewer’s permanent id
(bottom) under what the leak decides of each (top; ? where it decides nothing).</figcaption></figure>`;

const legendItem = (colour: string, text: string) =>
  html`<span class="item"><span class="swatch" style="background:${colour}"></span>${text}</span>`;

/** The readings: the plot of every segment's z, the bits side by side, and the chance of an error. */
export function readingSection(input: ReportInput): Html {
  const report = input.visible.report;
  if (!report || report.detection.segments.length === 0) return html``;
  const segments = report.detection.segments;
  const viewerBits = input.visible.evidence?.session.binaryId ?? null;
  // cases stored before the read-out was kept predate keyed rules
  const readout = report.readout ?? readOut(segments, FIXED_RULE, DECIDED_Z);
  const legend = viewerBits
    ? [
        legendItem(AGREEMENT_COLOUR.agrees, 'decided, as the viewer was served'),
        legendItem(AGREEMENT_COLOUR['leans-for'], 'below the threshold, leaning the viewer’s way'),
        legendItem(AGREEMENT_COLOUR['leans-against'], 'below the threshold, leaning the other way'),
        legendItem(AGREEMENT_COLOUR.contradicts, 'decided against the viewer'),
      ]
    : [
        legendItem(AGREEMENT_COLOUR.decided, 'decided on its own'),
        legendItem(AGREEMENT_COLOUR.undecided, 'below the threshold'),
      ];
  return html`<section><h2>What the leak reads</h2>
<figure class="keep">${segmentPlot(segments, viewerBits, DECIDED_Z)}
<figcaption>Each bar is one ${segmentSecondsOf(input)}-second segment of the original that the leak contains: its
score z says how strongly the leak carries variant A (up) or variant B (down). A bar beyond the dashed lines at
±${DECIDED_Z} decides its bit on its own.
${viewerBits ? 'Under each bar: the variant the named viewer was served there.' : ''}
<span class="legend">${legend}</span></figcaption></figure>
${viewerBits ? bitFigure(readout, viewerBits) : ''}
<h3>What the leak can and cannot show</h3>
${chanceParagraph(input, report)}
${verdictDetails(report)}
</section>`;
}

const PICTURES_NOT_KEPT = 'Not recorded: this case was analysed before pictures were kept.';

/** The leak's pictures beside the original's at the moments the detector lined up. */
export function framesSection(input: ReportInput): Html {
  const leak = input.visible.report?.leak;
  if (!leak) return html`<section><h2>Pictures</h2><p class="missing">${PICTURES_NOT_KEPT}</p></section>`;
  if (leak.frames.length === 0)
    return html`<section><h2>Pictures</h2><p>${leak.framesNote ?? 'No pictures were made.'}</p></section>`;
  const shot = (src: string, what: string, seconds: number) => {
    const at = `${seconds.toFixed(1)} s`;
    return html`<div><img src="${src}" alt="the ${what} at ${at}"><span>${what}, ${at}</span></div>`;
  };
  const pairs = leak.frames.map(
    (f) => html`<figure class="pair">
<div class="shots">${shot(f.leak, 'leak', f.leakSeconds)}
${shot(f.original, 'original', f.originalSeconds)}</div>
<figcaption>Segment ${f.segment}</figcaption></figure>`,
  );
  return html`<section><h2>Pictures side by side</h2>
<p>Moments of the leak beside the moments of the original the analysis lined them up with. The original is shown
as the service packaged it (variant A; the two variants differ only by the invisible mark).</p>
<div class="pairs">${pairs}</div></section>`;
}
