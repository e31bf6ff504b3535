import { type SegmentReading, servedOnReading } from '../watermark/segments.js';
import { type Html, html } from './html.js';

/** A segment's reading against the variant the named viewer was served there ('0' for A, '1' for B). */
export type Agreement = 'agrees' | 'leans-for' | 'leans-against' | 'contradicts' | 'decided' | 'undecided';

/** variant A ('0') should read as positive z, variant B ('1') as negative. */
export function agreementOf(z: number, bit: string | undefined, threshold: number): Agreement {
  const decided = Math.abs(z) >= threshold;
  if (bit !== '0' && bit !== '1') return decided ? 'decided' : 'undecided';
  const along = (bit === '0' ? 1 : -1) * Math.sign(z) > 0;
  if (decided) return along ? 'agrees' : 'contradicts';
  return along ? 'leans-for' : 'leans-against';
}

export const AGREEMENT_COLOUR: Record<Agreement, string> = {
  agrees: '#1a7f37',
  'leans-for': '#8fd19e',
  'leans-against': '#f5a3a3',
  contradicts: '#cf222e',
  decided: '#0969da',
  undecided: '#afb8c1',
};

const W = 760;
const H = 268;
const LEFT = 56;
/** room on the right for the thresholds' labels, beside the plot rather than over its bars */
const RIGHT = 140;
const TOP = 14;
const PLOT_H = 200;
/** Past this many segments the per-segment labels would overlap: colour carries the bits instead. */
const LABELLED = 60;

/** A round top for the axis: 6, 8, 10, 15, 20, 30, 40, 60, … */
function axisTop(max: number): number {
  for (const step of [6, 8, 10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300, 500]) if (max <= step) return step;
  return Math.ceil(max / 100) * 100;
}

const fixed = (v: number) => v.toFixed(1);

const servedLabel = (base: number) =>
  html`<text x="${LEFT - 7}" y="${base + 18}" text-anchor="end" class="bit">served</text>`;

/** A served variant bit as the letter of its variant. */
export const VARIANT_OF: Record<'0' | '1', string> = { '0': 'A', '1': 'B' };

/**
 * Every segment's z as a bar from zero, the decision thresholds ±`threshold` as dashed lines,
 * and, when a viewer is named, the variant that viewer was served under each bar (the bar's colour
 * says whether the reading goes along with it). Drawn by hand: the report has no scripts and no
 * assets, and a plain SVG prints as sharply as the text around it.
 */
export function segmentPlot(segments: readonly SegmentReading[], viewerBits: string | null, threshold: number): Html {
  const sorted = [...segments].sort((a, b) => a.index - b.index);
  const first = sorted[0]?.index ?? 0;
  const slots = (sorted.at(-1)?.index ?? 0) - first + 1;
  const top = axisTop(Math.max(threshold * 1.5, ...sorted.map((s) => Math.abs(s.z))));
  const plotW = W - LEFT - RIGHT;
  const slot = plotW / Math.max(1, slots);
  const y = (z: number) => TOP + PLOT_H / 2 - (z / top) * (PLOT_H / 2);
  const x = (index: number) => LEFT + (index - first) * slot;
  const served = new Map(sorted.map((s) => [s.index, viewerBits ? servedOnReading(s, viewerBits) : undefined]));
  const bitOf = (index: number) => served.get(index);
  const labelled = slots <= LABELLED;
  const labelEvery = slots <= 30 ? 1 : slots <= LABELLED ? 5 : Math.ceil(slots / 100) * 10;

  const ticks = [-top, -threshold, 0, threshold, top].map(
    (v) =>
      html`<line x1="${LEFT - 4}" x2="${LEFT}" y1="${fixed(y(v))}" y2="${fixed(y(v))}" class="axis"/><text
        x="${LEFT - 7}" y="${fixed(y(v) + 4)}" text-anchor="end">${v > 0 ? '+' : ''}${v}</text>`,
  );
  const bars = sorted.map((s) => {
    const colour = AGREEMENT_COLOUR[agreementOf(s.z, bitOf(s.index), threshold)];
    const y0 = Math.min(y(0), y(s.z));
    const h = Math.max(1, Math.abs(y(s.z) - y(0)));
    const bw = Math.max(1, slot * 0.7);
    return html`<rect x="${fixed(x(s.index) + (slot - bw) / 2)}" y="${fixed(y0)}" width="${fixed(bw)}"
      height="${fixed(h)}" fill="${colour}"><title>segment ${s.index}: z ${s.z.toFixed(2)}</title></rect>`;
  });
  const base = TOP + PLOT_H;
  const labels: Html[] = [];
  for (let i = first; i < first + slots; i++) {
    const cx = fixed(x(i) + slot / 2);
    const bit = bitOf(i);
    if (labelled && bit)
      labels.push(html`<text x="${cx}" y="${base + 18}" text-anchor="middle" class="bit">${VARIANT_OF[bit]}</text>`);
    if ((i - first) % labelEvery === 0)
      labels.push(html`<text x="${cx}" y="${base + 40}" text-anchor="middle" class="index">${i}</text>`);
  }
  const thresholdLine = (z: number, text: string) =>
    html`<line x1="${LEFT}" x2="${W - RIGHT}" y1="${fixed(y(z))}" y2="${fixed(y(z))}" class="threshold"/><text
      x="${W - RIGHT + 6}" y="${fixed(y(z) + 4)}" text-anchor="start" class="threshold-label">${text}</text>`;
  return html`<svg class="plot" viewBox="0 0 ${W} ${H}" role="img"
  aria-label="z of every segment against the decision threshold" xmlns="http://www.w3.org/2000/svg">
<rect x="${LEFT}" y="${TOP}" width="${plotW}" height="${PLOT_H}" class="frame"/>
${ticks}
<text x="14" y="${TOP + PLOT_H / 2}" transform="rotate(-90 14 ${TOP + PLOT_H / 2})"
  text-anchor="middle">z (+ variant A, − variant B)</text>
${bars}
<line x1="${LEFT}" x2="${W - RIGHT}" y1="${fixed(y(0))}" y2="${fixed(y(0))}" class="zero"/>
${thresholdLine(threshold, `+${threshold}: reads as A`)}
${thresholdLine(-threshold, `−${threshold}: reads as B`)}
${labelled && viewerBits ? servedLabel(base) : ''}
<text x="${LEFT - 7}" y="${base + 40}" text-anchor="end" class="index">seg.</text>
${labels}
</svg>`;
}
