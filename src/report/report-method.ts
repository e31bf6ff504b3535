import { DECIDED_Z } from '../domain/forensics/matching/matching.js';
import { ID_BITS, positionOfReading, servedOnReading } from '../watermark/segments.js';
import { type Html, html } from './html.js';
import { type ReportInput, segmentSecondsOf } from './report-facts.js';
import { agreementOf, VARIANT_OF } from './segment-plot.js';

/** How the mark is made and read, in words a reader without signal processing can follow. */
export function methodSection(input: ReportInput): Html {
  const video = input.content.type === 'video';
  const where = video
    ? 'a pattern hidden in the fine detail of the picture (its wavelet coefficients, computed with a dual-tree ' +
      'complex wavelet transform), too faint to see'
    : 'a pattern hidden in the sound’s spectrum (computed with a short-time Fourier transform), too faint to hear';
  const align = video
    ? 'in time (which moment of the original each frame shows), in space (any crop, scaling or border) and in ' +
      'brightness'
    : 'in time (where the excerpt starts, and any change of speed)';
  return html`<section><h2>The method in plain words</h2>
<p>When the content was added to the service, every ${segmentSecondsOf(input)}-second segment was prepared twice,
as <em>variant A</em> and <em>variant B</em>. The two differ only by ${where}; the pattern comes from a secret key the
service holds.</p>
${ruleParagraph(input)}
<p>To analyse a leak, the service first lines it up with the original ${align}, so that each part of the leak is
compared with the part of the original it came from. For each segment it then measures whether the leak carries the A
pattern or the B pattern, as a score <var>z</var>: positive for A, negative for B, near zero when the segment carries
neither. The score is calibrated so that, without a mark, it behaves like a standard random number; a score beyond
±${DECIDED_Z} decides the segment’s bit on its own.</p>
<p>Finally the scores are compared with the id of every viewer who streamed the content, and two questions are
answered apart. Is this content’s mark in the copy at all? The scores added up along the best-fitting viewer’s bits
say how unlikely they are by chance (the mark figure, a Gaussian tail bound that holds whatever the picture or the
attack). Could the viewer the leak points at be innocent? A segment decides at most one bit, so that is bounded by the
decided bits alone: the service counts how many ids it gave out in each of the codes its ids are drawn from, and
bounds the chance that an innocent’s id shows the same decided bits, whether one viewer made the copy or several
spliced or averaged theirs (the identification figure: the sum, over the other viewers, of the chance that each shows
those bits). A viewer is named only when exactly one fits every decided bit and that chance is at most one in a
million. The model, its assumptions and the formula are in the service’s documentation (docs/forensics.md).</p>
</section>`;
}

/** Which bit of an id each segment carries: the content's own keyed rule, or the fixed rule of older content. */
function ruleParagraph(input: ReportInput): Html {
  const ids = html`Every viewer has a permanent id of ${ID_BITS} bits (zeros and ones).`;
  const copies = html`Every viewer therefore receives a copy that looks and sounds the same as everyone else’s but
carries its own sequence of A and B, repeating every ${ID_BITS} segments.`;
  if (input.visible.report?.segmentRule !== 'keyed')
    return html`<p>${ids} When a viewer streams the content, segment number <var>s</var> is sent as variant A where
bit <var>s</var> mod ${ID_BITS} of their id is 0 and as variant B where it is 1. ${copies}</p>`;
  return html`<p>${ids} When a viewer streams the content, each segment is sent as variant A or B according to one bit
of their id. Which bit each segment carries, and which value of it is sent as A, was set for this content alone by
the service’s secret key when it was added (a shuffle of the ${ID_BITS} positions and a swap of A and B per position),
so the sequence a viewer receives of one film says nothing about the sequence they receive of another. ${copies}</p>`;
}

const AGREEMENT_TEXT: Record<ReturnType<typeof agreementOf>, string> = {
  agrees: 'agrees',
  'leans-for': 'leans towards',
  'leans-against': 'leans against',
  contradicts: 'contradicts',
  decided: 'decided',
  undecided: 'undecided',
};

/** Every segment's reading in numbers: what the plot draws, for a reader who wants the figures. */
export function segmentsAppendix(input: ReportInput): Html {
  const report = input.visible.report;
  if (!report || report.detection.segments.length === 0) return html``;
  const viewerBits = input.visible.evidence?.session.binaryId ?? null;
  const rows = [...report.detection.segments]
    .sort((a, b) => a.index - b.index)
    .map((s) => {
      const read = s.z >= DECIDED_Z ? 'A' : s.z <= -DECIDED_Z ? 'B' : 'undecided';
      const bit = viewerBits ? servedOnReading(s, viewerBits) : undefined;
      const agreement = agreementOf(s.z, bit, DECIDED_Z);
      const carries = html`${positionOfReading(s)}${s.flipped ? ' (1 as A)' : ''}`;
      const position = html`<td>${s.index}</td><td>${carries}</td><td>${s.coverage.toFixed(1)} s</td>`;
      const reading = html`<td class="num">${s.z.toFixed(2)}</td><td>${read}</td>`;
      const served = viewerBits
        ? html`<td>${bit ? VARIANT_OF[bit] : '?'}</td><td class="${agreement}">${AGREEMENT_TEXT[agreement]}</td>`
        : '';
      return html`<tr>${position}${reading}${served}</tr>`;
    });
  const servedHead = viewerBits ? html`<th>viewer was served</th><th>reading</th>` : '';
  const leakHead = html`<th>segment</th><th>bit of the id</th><th>leak covers</th><th>z</th><th>leak reads</th>`;
  const head = html`<tr>${leakHead}${servedHead}</tr>`;
  const alignment = Object.entries(report.detection.alignment).map(
    ([k, v]) => html`<li><code>${k}</code>: ${String(v)}</li>`,
  );
  return html`<section class="appendix"><h2>Appendix: every segment</h2>
<table class="segments"><thead>${head}</thead><tbody>${rows}</tbody></table>
<h3>How the leak was lined up</h3><ul class="alignment">${alignment}</ul></section>`;
}
