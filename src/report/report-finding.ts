import type { ForensicReport } from '../domain/forensics/report.js';
import { DECIDED_Z, STRONG_CONFUSION, STRONG_FP, WEAK_FP } from '../forensics/matching.js';
import { ID_BITS, readOut } from '../watermark/segments.js';
import { atMost, type Html, html, oneIn, probability, utc } from './html.js';
import { contentName, type ReportInput } from './report-facts.js';
import { AGREEMENT_COLOUR, segmentPlot } from './segment-plot.js';

/** The viewer the reader may see named: their external id, or none. */
const viewerName = (input: ReportInput) => input.visible.evidence?.viewer.externalViewerId ?? null;

/** The finding in a few sentences, first on the page: what a reader who reads nothing else must know. */
export function findingSection(input: ReportInput): Html {
  const { row, visible } = input;
  const report = visible.report;
  const e = visible.evidence;
  const unmatched = report?.detection.alignment.unmatched;
  let text: Html;
  if (row.status === 'processing') text = html`The analysis has <strong>not finished</strong>: this report is preliminary and states no finding.`;
  else if (row.status === 'failed' || !report) text = html`The analysis <strong>failed</strong>: ${row.failureReason ?? 'no reason was recorded'}. It states no finding.`;
  else if (typeof unmatched === 'string') text = html`<strong>No match.</strong> The leak does not line up with ${contentName(input)}: ${unmatched}.`;
  else if (e) {
    const strength = row.classification === 'strong_match' ? html`<strong>Strong match.</strong>` : html`<strong>Weak match</strong> (a lead, not proof).`;
    text = html`${strength} The leaked copy of ${contentName(input)} carries the watermark of the viewer “${e.viewer.externalViewerId}” of
      ${e.organization.name}, who streamed it in session <code>${e.session.id}</code> starting ${utc(e.session.createdAt)} from the IP address
      ${e.viewer.ipAddress ?? '(not recorded)'}.`;
  } else if (visible.matchedOutsideOrganization) {
    text = html`<strong>${row.classification === 'strong_match' ? 'Strong' : 'Weak'} match</strong> with a viewer of another organization, whose identity is not shown here.`;
  } else if (report.matchesUnmarkedSessions) {
    text = html`<strong>No match.</strong> The leak reads as variant A throughout, as served to sessions whose license had watermarking turned off:
      it was taken from such a session, and nobody can be named.`;
  } else text = html`<strong>No match.</strong> The leak does not carry the mark of any viewer who streamed ${contentName(input)} clearly enough to name anyone.`;
  return html`<section class="finding ${row.classification ?? row.status}"><h2>Finding</h2><p>${text}</p></section>`;
}

/**
 * The false-positive figure in plain words, with this case's numbers: what the matcher bounds
 * (src/forensics/matching.ts), what supportedBits counts, and the thresholds a finding needs.
 */
export function chanceParagraph(input: ReportInput, report: ForensicReport): Html {
  const n = report.detection.segments.length;
  const N = report.candidates;
  if (N === 0) return html`<p>Nobody streamed this content with a mark, so there was nobody to compare the leak with.</p>`;
  const who = viewerName(input) ? html`“${viewerName(input)}”` : html`the best-fitting viewer`;
  const everyone = N === 1 ? html`the permanent id of the one viewer` : html`the permanent ids of all ${N} viewers`;
  const score = report.score === null ? '' : html`, with a combined score of ${report.score.toFixed(1)} (the ${n} segment readings added up along that viewer’s bits and divided by √${n})`;
  const fp = html`${atMost(report.falsePositiveProbability)}${oneIn(report.falsePositiveProbability)}`;
  const decided = [...(report.readout ?? readOut(report.detection.segments, DECIDED_Z))].filter((b) => b !== '?').length;
  const agree = report.supportedBits === decided ? (decided === 1 ? 'it agrees' : 'all agree') : `${report.supportedBits} agree and ${decided - report.supportedBits} disagree`;
  const against = report.contradictions === 0 ? 'no segment is read firmly against it' : `${report.contradictions} segment(s) are read firmly against it`;
  const bits = html`Of the viewer’s ${ID_BITS} bits, the leak on its own decides ${decided}: ${agree} with the viewer’s id (the
    <em>supported bits</em>, ${report.supportedBits} of ${ID_BITS}), and ${against}; the other ${ID_BITS - decided} are not in the leak or too
    faint to read one by one: missing evidence, not evidence against the viewer. `;
  const named = report.classification !== 'no_match';
  const confusion =
    N === 1
      ? html`No other viewer streamed it marked, so there is nobody else it could be confused with.`
      : html`The probability that another of the viewers rather than ${who} is the source is ${atMost(report.confusionProbability)}.`;
  return html`<p class="chance">The leak was compared with ${everyone} who streamed this content
    marked${report.matchesUnmarkedSessions ? ' (and with the plain copy served to unmarked sessions)' : ''}. The best fit is ${who}${score}.
    If the leak carried no such viewer’s mark, the probability that ${N === 1 ? 'it' : `any of the ${N}`} would fit this well by chance is ${fp}:
    this is the <em>false-positive probability</em>, a bound that holds whatever the picture or sound and however the copy was re-encoded or
    cut, without any estimate. ${named ? bits : ''}${confusion} A strong match needs the false-positive probability at most
    ${probability(STRONG_FP)} (one in a billion), the chance of another viewer at most ${probability(STRONG_CONFUSION)} (one in a million) and no
    segment read against the viewer; a weak match needs the false-positive probability at most ${probability(WEAK_FP)}. This case is a
    <strong>${(report.classification ?? 'no_match').replace('_', ' ')}</strong>.</p>`;
}

/** The 40 bits as the leak reads them beside the named viewer's id, one cell each. */
function bitGrid(readout: string, viewerBits: string): Html {
  const cells = Array.from({ length: ID_BITS }, (_, b) => {
    const r = readout[b] ?? '?';
    const v = viewerBits[b] ?? '?';
    const cls = r === '?' ? 'unread' : r === v ? 'agree' : 'disagree';
    return html`<td class="${cls}"><span class="pos">${b}</span>${r}<br>${v}</td>`;
  });
  return html`<table class="bitgrid"><tbody><tr><th scope="row">bit<br>leak<br>viewer</th>${cells}</tr></tbody></table>`;
}

const legendItem = (colour: string, text: string) => html`<span class="item"><span class="swatch" style="background:${colour}"></span>${text}</span>`;

/** The readings: the plot of every segment's z, the bits side by side, and the chance of an error. */
export function readingSection(input: ReportInput): Html {
  const report = input.visible.report;
  if (!report || report.detection.segments.length === 0) return html``;
  const segments = report.detection.segments;
  const viewerBits = input.visible.evidence?.session.binaryId ?? null;
  const readout = report.readout ?? readOut(segments, DECIDED_Z);
  const legend = viewerBits
    ? [
        legendItem(AGREEMENT_COLOUR.agrees, 'decided, as the viewer was served'),
        legendItem(AGREEMENT_COLOUR['leans-for'], 'below the threshold, leaning the viewer’s way'),
        legendItem(AGREEMENT_COLOUR['leans-against'], 'below the threshold, leaning the other way'),
        legendItem(AGREEMENT_COLOUR.contradicts, 'decided against the viewer'),
      ]
    : [legendItem(AGREEMENT_COLOUR.decided, 'decided on its own'), legendItem(AGREEMENT_COLOUR.undecided, 'below the threshold')];
  return html`<section><h2>What the leak reads</h2>
<figure class="keep">${segmentPlot(segments, viewerBits, DECIDED_Z)}
<figcaption>Each bar is one 10-second segment of the original that the leak contains: its score z says how strongly the leak carries
variant A (up) or variant B (down). A bar beyond the dashed lines at ±${DECIDED_Z} decides its bit on its own.
${viewerBits ? 'Under each bar: the bit the named viewer was served there (0 = A, 1 = B).' : ''}
<span class="legend">${legend}</span></figcaption></figure>
${viewerBits ? html`<figure class="keep">${bitGrid(readout, viewerBits)}<figcaption>The 40 bits of the viewer’s permanent id (bottom) under what the leak decides of each (top; ? where it decides nothing).</figcaption></figure>` : ''}
<h3>How likely is this by chance?</h3>
${chanceParagraph(input, report)}
</section>`;
}

/** The leak's pictures beside the original's at the moments the detector lined up. */
export function framesSection(input: ReportInput): Html {
  const leak = input.visible.report?.leak;
  if (!leak) return html`<section><h2>Pictures</h2><p class="missing">Not recorded: this case was analysed before pictures were kept.</p></section>`;
  if (leak.frames.length === 0) return html`<section><h2>Pictures</h2><p>${leak.framesNote ?? 'No pictures were made.'}</p></section>`;
  const pairs = leak.frames.map(
    (f) => html`<figure class="pair">
<div class="shots"><div><img src="${f.leak}" alt="the leak at ${f.leakSeconds.toFixed(1)} s"><span>leak, ${f.leakSeconds.toFixed(1)} s</span></div>
<div><img src="${f.original}" alt="the original at ${f.originalSeconds.toFixed(1)} s"><span>original, ${f.originalSeconds.toFixed(1)} s</span></div></div>
<figcaption>Segment ${f.segment}</figcaption></figure>`,
  );
  return html`<section><h2>Pictures side by side</h2>
<p>Moments of the leak beside the moments of the original the analysis lined them up with. The original is shown as the service packaged
it (variant A; the two variants differ only by the invisible mark).</p>
<div class="pairs">${pairs}</div></section>`;
}
