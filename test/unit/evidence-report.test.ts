import { atMost, oneIn } from '../../src/report/html.js';
import { describe, expect, it } from 'vitest';
import { visibleTo } from '../../src/present/forensics.js';
import { alignedTimes } from '../../src/domain/forensics/leak-frames.js';
import { renderEvidenceReport } from '../../src/report/evidence-report.js';
import {
  BITS,
  sampleCase,
  sampleEvidence,
  sampleMixedReport,
  sampleReport,
  sampleWeakReport,
} from '../helpers/evidence-case.js';

// The evidence report as a pure rendering of a stored case: every part present, nothing loaded
// from elsewhere, every string from the case escaped, and the facts a case made before they were
// kept shown as "not recorded" rather than missing or made up.

const ORG = 'org-1';
const XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>';

function render(fields: { title?: string; userAgent?: string; leak?: boolean; audience?: string } = {}) {
  const evidence = sampleEvidence({ organizationId: ORG, title: fields.title, userAgent: fields.userAgent });
  const row = sampleCase({ id: 'case-1', organizationId: ORG, report: sampleReport(evidence, { leak: fields.leak }) });
  return renderEvidenceReport({
    row,
    visible: visibleTo(row, fields.audience ? { organizationId: fields.audience } : 'operator'),
    content: { id: 'content-1', type: 'video', title: fields.title ?? 'Pan' },
    generatedAt: Date.UTC(2025, 0, 4),
    software: 'drm 9.9.9',
  });
}

describe('the evidence report of content under a keyed segment rule', () => {
  it('shows under each bar the variant the viewer was served by the rule, and which bit of the id each segment carries', () => {
    const evidence = sampleEvidence({ organizationId: ORG });
    const base = sampleReport(evidence);
    // segment 0 carries bit 7 served as is; segment 1 carries bit 2, its value flipped
    const keyed = base.detection.segments.map((s, i) => ({ ...s, position: [7, 2][i] ?? i + 10, flipped: i === 1 }));
    const report = { ...base, segmentRule: 'keyed' as const, detection: { ...base.detection, segments: keyed } };
    const row = sampleCase({ id: 'case-k', organizationId: ORG, report });
    const page = renderEvidenceReport({
      row,
      visible: visibleTo(row, 'operator'),
      content: { id: 'content-1', type: 'video', title: 'Pan' },
      generatedAt: Date.UTC(2025, 0, 4),
      software: 'drm 9.9.9',
    });
    const svg = page.slice(page.indexOf('<svg'), page.indexOf('</svg>'));
    const served = [...svg.matchAll(/class="bit">([AB])</g)].map((m) => m[1]);
    expect(served.slice(0, 2)).toEqual([BITS[7] === '0' ? 'A' : 'B', BITS[2] === '0' ? 'B' : 'A']);
    expect(page).toContain('<td>1</td><td>2 (1 as A)</td>');
    expect(page).toMatch(/set for this content alone\s+by\s+the service’s secret key/);
    expect(page).not.toMatch(/bit <var>s<\/var> mod 40/);
  });
});

describe('the evidence report', () => {
  it('holds the finding, the chain, the leak’s facts, the plot, the chance in numbers, the pictures and the method', () => {
    const page = render();
    expect(page.startsWith('<!doctype html>')).toBe(true);
    expect(page).toContain('<strong>Strong match.</strong>');
    expect(page).toContain('ab'.repeat(32));
    expect(page).toContain('4,321,000 bytes (4.3 MB)');
    expect(page).toContain('52.04 s (0:52.0)');
    expect(page).toContain('2025-01-03 09:00:00 UTC');
    expect(page).toMatch(/Analysed by<\/th><td>drm 0\.1\.0/);
    expect(page).toContain('Rendered by drm 9.9.9');
    for (const v of [
      'drm_live_abc',
      'Acme Films',
      '0x1111111111111111111111111111111111111111',
      'session-1',
      '203.0.113.7',
      BITS,
    ])
      expect(page).toContain(v);
    // The plot: one bar per segment, both thresholds, and the viewer's bit under each bar.
    const svg = page.slice(page.indexOf('<svg'), page.indexOf('</svg>'));
    expect(svg.match(/<rect [^>]*fill="#/g)).toHaveLength(6);
    expect(svg).toContain('+4: reads as A');
    expect(svg).toContain('−4: reads as B');
    expect(svg.match(/class="bit">[AB]</g)).toHaveLength(6);
    expect(page).toContain('3.2 × 10<sup>−14</sup>, about 1 in 3.1 × 10<sup>13</sup>');
    expect(page).toMatch(/The leak decides 5 of the\s+40 bits of an id/);
    // one viewer streamed the content: the figure is 0, which the report says as the absence of anyone else, never as a tiny chance
    expect(page).toMatch(
      /the chance that an innocent viewer fits these bits is\s+nil: nobody else streamed this content marked/,
    );
    expect(page).not.toMatch(/innocent[^.]*below 10<sup>−300/);
    expect(page).toContain('(the <em>mark figure</em>)');
    expect(page.match(/<img src="data:image\/jpeg;base64,/g)).toHaveLength(2);
    expect(page).toContain('The method in plain words');
  });

  it('carries its stylesheet as written: CSS is markup of our own, never escaped', () => {
    const page = render();
    expect(page).toContain('font: 15px/1.5 "Liberation Serif", "Times New Roman", Georgia, serif;');
    expect(page.slice(page.indexOf('<style>'), page.indexOf('</style>'))).not.toContain('&quot;');
  });

  it('loads nothing: no script, no external URL, no stylesheet link', () => {
    const page = render();
    expect(page).not.toMatch(/<script|<link|<iframe|@import|url\(/i);
    // The only URLs are the SVG's namespace and data: pictures.
    const urls = [...page.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
    expect(urls.every((u) => u?.startsWith('data:image/jpeg;base64,'))).toBe(true);
  });

  it('escapes a title and a user agent that look like markup', () => {
    const page = render({ title: XSS, userAgent: `"><svg onload=alert(2)>` });
    expect(page).not.toContain('<script>alert');
    expect(page).not.toContain('<img src=x');
    expect(page).not.toContain('<svg onload');
    expect(page).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(page).toContain('&quot;&gt;&lt;svg onload=alert(2)&gt;');
    expect(page).toContain('leak &lt;b&gt;.mp4');
  });

  it('says "not recorded" for the facts of a case analysed before they were kept', () => {
    const page = render({ leak: false });
    expect(page).toMatch(/SHA-256<\/th><td><span class="missing">not recorded<\/span>/);
    expect(page).toMatch(/Duration<\/th><td><span class="missing">not recorded<\/span>/);
    expect(page).toMatch(/Analysed by<\/th><td><span class="missing">not recorded<\/span>/);
    // What the case row itself holds is still there.
    expect(page).toContain('4,321,000 bytes');
    expect(page).toContain('Not recorded: this case was analysed before pictures were kept.');
  });

  it('names nobody to an organization whose best match is another organization’s viewer', () => {
    const page = render({ audience: 'someone-else' });
    expect(page).toContain('another organization');
    for (const v of [
      'Acme Films',
      'alice',
      '203.0.113.7',
      '0x1111111111111111111111111111111111111111',
      'session-1',
      BITS,
    ])
      expect(page).not.toContain(v);
  });

  it('lists the candidates of a weak result, names none of them, and shows an organization only its own', () => {
    const row = sampleCase({ id: 'case-3', organizationId: ORG, report: sampleWeakReport(ORG) });
    const page = renderEvidenceReport({
      row,
      visible: visibleTo(row, { organizationId: ORG }),
      content: { id: 'content-1', type: 'video', title: 'Pan' },
      generatedAt: 0,
      software: 'drm 9.9.9',
    });
    expect(page).toContain('<strong>Weak match: nobody is named.</strong>');
    expect(page).toMatch(
      /3 viewer\(s\) fit every decided bit\. 1 more of other organizations are not shown\. 2 further segment\(s\)/,
    );
    expect(page).toContain('A leak 19 segment(s) longer could name one of them.');
    for (const v of ['alice', 'bob', 'viewer-1', 'viewer-2']) expect(page).toContain(v);
    for (const v of ['mallory', 'viewer-9', 'session-1', '203.0.113.7']) expect(page).not.toContain(v);
    expect(page).toContain('at most 0.41');
  });

  it('shows a mixed copy: the positions read both ways, the fewest sources, and the suspects, naming nobody', () => {
    const row = sampleCase({ id: 'case-4', organizationId: ORG, report: sampleMixedReport(ORG) });
    const page = renderEvidenceReport({
      row,
      visible: visibleTo(row, 'operator'),
      content: { id: 'content-1', type: 'video', title: 'Pan' },
      generatedAt: 0,
      software: 'drm 9.9.9',
    });
    expect(page).toContain('<strong>Mixed copy: nobody is named.</strong>');
    expect(page).toContain('Bit position(s) 3 read A in one segment and B in another');
    expect(page).toMatch(/every reading: 2\./);
    expect(page).toMatch(
      /1 coalition\(s\) of that size explain them\. The viewer\(s\) below are in\s+every one of them/,
    );
    expect(page).toContain('<th>were it innocent, its chance to be in such a coalition</th>');
    for (const v of ['alice', 'bob']) expect(page).toContain(v);
  });

  it('renders a failed case with its reason and no figures', () => {
    const row = sampleCase({ id: 'case-2', organizationId: null, report: null });
    const page = renderEvidenceReport({
      row,
      visible: visibleTo(row, 'operator'),
      content: { id: 'c', type: 'video', title: null },
      generatedAt: 0,
      software: 'drm 9.9.9',
    });
    expect(page).toContain('The analysis <strong>failed</strong>: analysis failed: internal error');
    expect(page).not.toContain('<svg');
    expect(page).toContain('no longer in the catalog');
  });
});

describe('the pictures’ moments', () => {
  const starts = [0, 10, 20, 30, 40];
  const seg = (index: number, coverage = 10) => ({ index, z: 5, bit: '0' as const, coverage });

  it('takes the first, middle and last segment the leak covers, each at the middle of what it holds', () => {
    // The leak starts 7 s into the original and lasts 30 s: segment 0 from 7 to 10, 3 from 30 to 37.
    const times = alignedTimes([seg(0, 3), seg(1), seg(2), seg(3, 7)], 7, 30, starts);
    expect(times).toEqual([
      { segment: 0, originalSeconds: 8.5, leakSeconds: 1.5 },
      { segment: 2, originalSeconds: 25, leakSeconds: 18 },
      { segment: 3, originalSeconds: 33.5, leakSeconds: 26.5 },
    ]);
  });

  it('skips segments the leak barely touches, and has nothing for no segments', () => {
    expect(alignedTimes([seg(0, 0.4), seg(1)], 9.6, 10.4, starts).map((t) => t.segment)).toEqual([1]);
    expect(alignedTimes([], 0, 30, starts)).toEqual([]);
  });
});

describe('the numbers of the chance paragraph', () => {
  it('says a probability as a person reads it, down to the smallest a double holds', () => {
    const said = (p: number) => `${atMost(p)}${oneIn(p)}`;
    expect(said(3.2e-12)).toBe('at most 3.2 × 10<sup>−12</sup>, about 1 in 3.1 × 10<sup>11</sup>');
    expect(said(2e-5)).toBe('at most 2.0 × 10<sup>−5</sup>, about 1 in 50,000');
    // A subnormal double: its inverse overflows to Infinity.
    expect(said(5.1e-309)).toBe('at most 5.1 × 10<sup>−309</sup>, less than 1 in 10<sup>308</sup>');
    expect(said(0)).toBe('below 10<sup>−300</sup>');
  });
});
