/**
 * HTML built from template literals in which every value is escaped unless it is itself HTML
 * made here: titles, names and user agents in a case are typed by strangers (a leak's uploader,
 * a viewer's player), so escaping is what happens unless a piece of markup says otherwise.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);

function piece(v: unknown): string {
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(piece).join('');
  if (v === null || v === undefined || v === false) return '';
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] as string;
  values.forEach((v, i) => {
    out += piece(v) + (strings[i + 1] as string);
  });
  return new Html(out);
}

/** What the report says where a case made before a fact was kept has none. */
export const NOT_RECORDED = html`<span class="missing">not recorded</span>`;

/** 2025-03-01 12:34:56 UTC: one unambiguous zone for a document read anywhere. */
export const utc = (ms: number | null | undefined): Html | string =>
  typeof ms === 'number' ? `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC` : NOT_RECORDED;

export function byteSize(bytes: number | null | undefined): Html | string {
  if (typeof bytes !== 'number') return NOT_RECORDED;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let unit = '';
  for (const u of units) {
    if (v < 1000) break;
    v /= 1000;
    unit = u;
  }
  return `${bytes.toLocaleString('en-US')} bytes${unit ? ` (${v.toFixed(1)} ${unit})` : ''}`;
}

/** 83.4 s as 1:23.4 (minutes and seconds), for times in a film. */
export function clock(seconds: number): string {
  const m = Math.floor(seconds / 60);
  const s = seconds - m * 60;
  return `${m}:${s.toFixed(1).padStart(4, '0')}`;
}

export const duration = (seconds: number | null | undefined): Html | string =>
  typeof seconds === 'number' ? `${seconds.toFixed(2)} s (${clock(seconds)})` : NOT_RECORDED;

/**
 * A probability as a person reads it: 3.2 × 10⁻¹² rather than 3.2e-12. Below what a double can
 * hold the matcher stores 0: it is "below 10⁻³⁰⁰", not impossible.
 */
export function probability(p: number): Html {
  if (p <= 0) return html`less than 10<sup>−300</sup>`;
  if (p >= 1) return html`1`;
  if (p >= 0.001) return html`${p.toPrecision(2)}`;
  const [mantissa, exponent] = p.toExponential(1).split('e') as [string, string];
  return html`${mantissa} × 10<sup>${exponent.replace('-', '−')}</sup>`;
}

/** "at most 3.2 × 10⁻¹²", or "below 10⁻³⁰⁰" where the matcher stored 0. */
export const atMost = (p: number): Html => (p <= 0 ? html`below 10<sup>−300</sup>` : html`at most ${probability(p)}`);

/** "1 in 3.1 × 10¹¹" for a small probability; nothing for one that is not small. */
export function oneIn(p: number): Html | '' {
  if (p <= 0 || p > 0.01) return '';
  const n = 1 / p;
  // Below about 10⁻³⁰⁸ (a subnormal double) the odds no longer fit a double at all.
  if (!Number.isFinite(n)) return html`, less than 1 in 10<sup>308</sup>`;
  if (n < 1e6) return html`, about 1 in ${Math.round(n).toLocaleString('en-US')}`;
  const [mantissa, exponent] = n.toExponential(1).split('e') as [string, string];
  return html`, about 1 in ${mantissa} × 10<sup>${exponent.replace('+', '')}</sup>`;
}
