import type { Terms } from './terms.js';

/** GB here is 10^9 bytes, as disks and networks count (docs/billing.md). */
export const BYTES_PER_GB = 1_000_000_000;

/** What one period's sessions measure: streams and bytes per price (null: the plan's price). */
export interface UsageGroup {
  priceMicro: number | null;
  streams: number;
  bytes: number;
}

export interface Line {
  kind: 'subscription' | 'streams' | 'gb' | 'revenue_share' | 'late_usage' | 'carried_forward' | 'credit';
  description: string;
  quantity: number;
  unitPriceMicro: number;
  amountMicro: number;
}

/** x · y / d rounded half up, exact for any sizes (bytes times micro-prices pass 2^53). */
export function mulDivHalfUp(x: number, y: number, d: number): number {
  const n = BigInt(x) * BigInt(y);
  const q = (2n * n + BigInt(d)) / (2n * BigInt(d));
  return Number(q);
}

export const totalOf = (lines: readonly Line[]): number => lines.reduce((s, l) => s + l.amountMicro, 0);

/**
 * The usage lines of a period: streams at the plan's price past the included streams, streams at
 * a license's own price from the first, GB past the included GB, and for a plan with a revenue
 * share that share of the usage charge returned as a credit.
 */
export function usageLines(terms: Terms, groups: readonly UsageGroup[]): Line[] {
  const lines: Line[] = [];
  const planStreams = groups.filter((g) => g.priceMicro === null).reduce((s, g) => s + g.streams, 0);
  const chargeable = Math.max(0, planStreams - terms.includedStreams);
  if (chargeable > 0) {
    lines.push(
      line('streams', `streams past the ${terms.includedStreams} included`, chargeable, terms.pricePerStreamMicro),
    );
  }
  for (const g of [...groups]
    .filter((x) => x.priceMicro !== null)
    .sort((a, b) => (a.priceMicro as number) - (b.priceMicro as number))) {
    lines.push(line('streams', 'streams at the license price', g.streams, g.priceMicro as number));
  }
  const bytes = groups.reduce((s, g) => s + g.bytes, 0);
  const overBytes = Math.max(0, bytes - terms.includedGb * BYTES_PER_GB);
  if (overBytes > 0) {
    lines.push({
      kind: 'gb',
      description: `bytes past the ${terms.includedGb} GB included, per GB`,
      quantity: overBytes,
      unitPriceMicro: terms.pricePerGbMicro,
      amountMicro: mulDivHalfUp(overBytes, terms.pricePerGbMicro, BYTES_PER_GB),
    });
  }
  const usage = totalOf(lines);
  if (terms.revenueSharePct > 0 && usage > 0) {
    const share = mulDivHalfUp(usage, terms.revenueSharePct, 100);
    lines.push({
      kind: 'revenue_share',
      description: `revenue share, ${terms.revenueSharePct}% of usage`,
      quantity: 1,
      unitPriceMicro: -share,
      amountMicro: -share,
    });
  }
  return lines;
}

function line(kind: Line['kind'], description: string, quantity: number, unitPriceMicro: number): Line {
  return { kind, description, quantity, unitPriceMicro, amountMicro: mulDivHalfUp(quantity, unitPriceMicro, 1) };
}

/**
 * The watermark fee of one video by the short side of its frame (spec section 1 names the tiers by
 * lines: up to 720 lines 1,500 APUSD, up to 1080 3,500, up to 2160 (4K) 5,000, above 10,000). The
 * short side is the field's usual rule, as in "1080p" for a 1920×1080 film and a 1080×1920 phone
 * video alike: by height alone, a portrait 720×1280 video paid the 4K fee. A size between two tiers
 * pays the higher one (a 900-line video is charged as 1080p). Music carries no fee: the spec prices
 * video only.
 */
export function watermarkFeeMicro(type: 'video' | 'music', frame: { width: number; height: number } | null): number {
  if (type !== 'video') return 0;
  const lines = frame ? Math.min(frame.width, frame.height) : 0;
  const apusd = lines <= 720 ? 1_500 : lines <= 1080 ? 3_500 : lines <= 2160 ? 5_000 : 10_000;
  return apusd * 1_000_000;
}
