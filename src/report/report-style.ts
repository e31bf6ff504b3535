/**
 * The report's one stylesheet, inline (the page loads nothing: its Content-Security-Policy allows
 * inline styles and data: images only). Print rules keep figures, tables of facts and picture
 * pairs whole on a page, and keep colours, which carry meaning in the plot and the bit grid.
 */
export const REPORT_CSS = `
:root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --paper: #ffffff; --tint: #f6f8fa; }
* { box-sizing: border-box; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
html { background: #eaeef2; }
body { margin: 0; font: 15px/1.5 "Liberation Serif", "Times New Roman", Georgia, serif; color: var(--ink); }
main {
  max-width: 860px; margin: 24px auto; padding: 40px 48px; background: var(--paper);
  box-shadow: 0 1px 4px rgba(0,0,0,.15);
}
header { border-bottom: 2px solid var(--ink); padding-bottom: 12px; margin-bottom: 8px; }
header .kicker {
  font: 600 12px/1.2 "Liberation Sans", Arial, sans-serif; letter-spacing: .08em; text-transform: uppercase;
  color: var(--muted);
}
h1 { font-size: 26px; margin: 6px 0 4px; }
header .sub { color: var(--muted); font-size: 14px; }
h2 {
  font: 600 17px/1.3 "Liberation Sans", Arial, sans-serif; margin: 26px 0 8px; padding-bottom: 3px;
  border-bottom: 1px solid var(--line);
}
h3 { font: 600 14px/1.3 "Liberation Sans", Arial, sans-serif; margin: 16px 0 6px; }
p { margin: 6px 0 10px; text-align: justify; hyphens: auto; }
code { font: 12.5px/1.3 "Liberation Mono", "DejaVu Sans Mono", monospace; word-break: break-all; }
.missing { color: var(--muted); font-style: italic; }
.note { color: var(--muted); font-size: 13px; }
.finding p {
  font-size: 16px; padding: 10px 14px; border-left: 5px solid #8c959f; background: var(--tint); text-align: left;
}
.finding.strong_match p { border-color: #1a7f37; }
.finding.weak_match p { border-color: #bf8700; }
.finding.mixed_copy p { border-color: #8250df; }
.finding.failed p, .finding.processing p { border-color: #cf222e; }
table { border-collapse: collapse; }
table.facts { width: 100%; font-size: 14px; }
table.facts th {
  text-align: left; vertical-align: top; width: 190px; padding: 4px 12px 4px 0; color: var(--muted);
  font: 600 13px/1.5 "Liberation Sans", Arial, sans-serif;
}
table.facts td { padding: 4px 0; border-bottom: 1px solid var(--tint); }
figure { margin: 12px 0 16px; }
figcaption { font-size: 13px; color: var(--muted); margin-top: 6px; }
svg.plot {
  width: 100%; height: auto; display: block; font: 11px "Liberation Sans", Arial, sans-serif; fill: var(--ink);
}
svg.plot .frame { fill: #fbfcfd; stroke: var(--line); }
svg.plot .axis, svg.plot .zero { stroke: #57606a; stroke-width: 1; }
svg.plot .threshold { stroke: #cf222e; stroke-width: 1.2; stroke-dasharray: 6 4; }
svg.plot .threshold-label {
  fill: #a40e26; font-size: 11px; paint-order: stroke; stroke: #fbfcfd; stroke-width: 4px; stroke-linejoin: round;
}
svg.plot .bit { font: 600 11px "Liberation Mono", monospace; }
svg.plot .index { fill: var(--muted); font-size: 10px; }
.legend { display: block; margin-top: 4px; }
.swatch {
  display: inline-block; width: 11px; height: 11px; margin: 0 5px 0 0; vertical-align: -1px; border-radius: 2px;
}
.legend .item { white-space: nowrap; margin-right: 14px; }
table.bitgrid { font: 12px/1.25 "Liberation Mono", monospace; width: 100%; table-layout: fixed; }
table.bitgrid th {
  font: 600 10px/1.25 "Liberation Sans", Arial, sans-serif; color: var(--muted); text-align: right;
  padding-right: 6px; width: 56px;
}
table.bitgrid td { text-align: center; border: 1px solid #fff; padding: 1px 0; }
table.bitgrid .pos { display: block; font-size: 8px; color: var(--muted); }
table.bitgrid .agree { background: #dafbe1; }
table.bitgrid .disagree { background: #ffd8d3; }
table.bitgrid .unread { background: var(--tint); color: #8c959f; }
.pairs { display: flex; flex-direction: column; gap: 14px; }
figure.pair { margin: 0; }
.shots { display: flex; gap: 12px; }
.shots div { flex: 1; }
.shots img { width: 100%; display: block; border: 1px solid var(--line); }
.shots span { display: block; font-size: 12px; color: var(--muted); margin-top: 2px; }
table.segments, table.candidates { width: 100%; font-size: 12.5px; }
table.candidates th {
  text-align: left; border-bottom: 1.5px solid var(--ink); padding: 3px 6px;
  font: 600 12px "Liberation Sans", Arial, sans-serif;
}
table.candidates td { padding: 3px 6px; border-bottom: 1px solid var(--tint); vertical-align: top; }
table.candidates .num { text-align: right; font-variant-numeric: tabular-nums; }
table.segments th {
  text-align: left; border-bottom: 1.5px solid var(--ink); padding: 3px 6px;
  font: 600 12px "Liberation Sans", Arial, sans-serif;
}
table.segments td { padding: 2px 6px; border-bottom: 1px solid var(--tint); }
table.segments .num { text-align: right; font-variant-numeric: tabular-nums; }
table.segments .agrees { color: #1a7f37; } table.segments .contradicts { color: #cf222e; font-weight: 600; }
ul.alignment { font-size: 13px; columns: 2; }
footer { margin-top: 28px; padding-top: 8px; border-top: 1px solid var(--line); font-size: 12px; color: var(--muted); }
@page { size: A4; margin: 16mm 15mm 18mm; }
@media print {
  html { background: none; }
  body { font-size: 10.5pt; }
  main { max-width: none; margin: 0; padding: 0; box-shadow: none; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  figure, .keep, table.facts, figure.pair, tr, .finding { break-inside: avoid; page-break-inside: avoid; }
  thead { display: table-header-group; }
}
`;
