import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

// An evidence report as its reader sees it: opened from disk in Debian's headless Chromium (as
// test/e2e/streaming-hlsjs.test.ts launches it), read back part by part, photographed, printed.

const CHROMIUM = '/usr/bin/chromium';

/** Where the screenshot and the PDF of the last run stay, for a person to look at. */
export const REPORT_SHOT = process.env.DRM_REPORT_SHOT ?? path.join(os.tmpdir(), 'drm-evidence-report.png');
export const REPORT_PDF = REPORT_SHOT.replace(/\.png$/, '.pdf');
export const REPORT_HTML = REPORT_SHOT.replace(/\.png$/, '.html');

export interface ReportView {
  title: string;
  headings: string[];
  /** the table rows of facts, label → text */
  facts: Record<string, string>;
  bars: number;
  /** the bits printed under the plot's bars */
  /** the variants the named viewer was served under the bars, A or B each */
  plotBits: string;
  /** each picture's natural width (0 for one that did not load) */
  pictures: number[];
  chance: string;
  /** every request the page made that is not its own file or a data: URI */
  requests: string[];
  pdfBytes: number;
  pdfPages: number;
}

export async function viewReport(file: string): Promise<ReportView> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1000, height: 1300 } });
    const requests: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith('data:') && r.url() !== `file://${file}`) requests.push(r.url());
    });
    await page.goto(`file://${file}`, { waitUntil: 'load' });
    const view = await page.evaluate(() => {
      const all = (s: string) => [...document.querySelectorAll(s)];
      const text = (e: Element | null) => (e?.textContent ?? '').replace(/\s+/g, ' ').trim();
      return {
        title: document.title,
        headings: all('h1, h2, h3').map(text),
        facts: Object.fromEntries(
          all('table.facts tr').map((tr) => [text(tr.querySelector('th')), text(tr.querySelector('td'))]),
        ),
        bars: all('svg.plot rect[fill]').length,
        plotBits: all('svg.plot text.bit')
          .map(text)
          .filter((b) => b === 'A' || b === 'B')
          .join(''),
        pictures: all('img').map((img) => (img as HTMLImageElement).naturalWidth),
        chance: text(document.querySelector('p.chance')),
      };
    });
    fs.copyFileSync(file, REPORT_HTML);
    await page.screenshot({ path: REPORT_SHOT, fullPage: true });
    const pdf = await page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true });
    fs.writeFileSync(REPORT_PDF, pdf);
    const pdfPages = (pdf.toString('latin1').match(/\/Type\s*\/Page\b/g) ?? []).length;
    return { ...view, requests, pdfBytes: pdf.length, pdfPages };
  } finally {
    await browser.close();
  }
}
