import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SubscriptionRow } from '../../src/db/repos/index.js';
import { formatApusd, roundMicro, shownAmount, shownLineAmounts } from '../../src/domain/billing/format.js';
import { monthsBetween, periodNamed, periodOf } from '../../src/domain/billing/periods.js';
import { mulDivHalfUp, totalOf, usageLines, watermarkFeeMicro } from '../../src/domain/billing/pricing.js';
import { endOnCancel, subscriptionCharge } from '../../src/domain/billing/subscriptions-rule.js';
import { annualPrice, listTerms, readTerms } from '../../src/domain/billing/terms.js';

// The pricing rules of README "Billing", the worked example included, as pure functions.

const M = 1_000_000;
const GB = 1_000_000_000;
const subscription = (fields: Partial<SubscriptionRow>): SubscriptionRow => ({
  ...{ id: 's', organizationId: 'o', product: 'videos', interval: 'month', priceMicro: 99 * M },
  ...{ startedAt: Date.UTC(2026, 0, 12), endsAt: null, cancelledAt: null, createdAt: Date.UTC(2026, 0, 12), ...fields },
});

describe('the worked example of the README', () => {
  const february = periodOf(Date.UTC(2026, 1, 10));
  const usage = [
    { priceMicro: null, streams: 12_500, bytes: 170 * GB },
    { priceMicro: 50_000, streams: 300, bytes: 10 * GB },
  ];

  it('charges 143.00 for February: the subscription, 2,500 streams past the included, 300 at the license price, 80 GB', () => {
    const lines = [subscriptionCharge(subscription({}), february), ...usageLines(listTerms('paid'), usage)];
    expect(lines.map((l) => [l?.kind, l?.quantity, l?.amountMicro])).toEqual([
      ['subscription', 1, 99 * M],
      ['streams', 2_500, 25 * M],
      ['streams', 300, 15 * M],
      ['gb', 80 * GB, 4 * M],
    ]);
    expect(totalOf(lines as never)).toBe(143 * M);
  });

  it('prices the late 1.2 GB at 0.06, and gives White-Label 10% of the usage back as a credit line', () => {
    expect(mulDivHalfUp(1.2 * GB, listTerms('paid').pricePerGbMicro, GB)).toBe(60_000);
    const whiteLabel = { ...listTerms('paid'), revenueSharePct: 10 };
    const share = usageLines(whiteLabel, usage).at(-1);
    expect(share).toMatchObject({ kind: 'revenue_share', amountMicro: -4_400_000 });
  });
});

describe('money at the edge', () => {
  it('rounds half up: whole APUSD in Shape A, cents in Shape B', () => {
    expect([shownAmount(605_000, 'b'), shownAmount(605_000, 'a')]).toEqual([0.61, 1]);
    expect([shownAmount(2_490_000, 'b'), shownAmount(2_490_000, 'a'), shownAmount(2_500_000, 'a')]).toEqual([
      2.49, 2, 3,
    ]);
    expect([
      shownAmount(-605_000, 'b'),
      shownAmount(1_009_800_000, 'b'),
      shownAmount(4_999, 'b'),
      shownAmount(5_000, 'b'),
    ]).toEqual([-0.61, 1009.8, 0, 0.01]);
    expect(formatApusd(-1_500_000_000)).toBe('-1,500.00');
  });

  it("shows an invoice's lines adding up to its total as shown: 7.5 + 99 + 1009.5 is 8 + 99 + 1009 in Shape A", () => {
    expect(shownLineAmounts([7_500_000, 99_000_000, 1_009_500_000], 'a')).toEqual([8, 99, 1009]);
    expect(shownLineAmounts([7_500_000, 99_000_000, 1_009_500_000], 'b')).toEqual([7.5, 99, 1009.5]);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -5_000_000_000, max: 5_000_000_000 }), { maxLength: 8 }),
        fc.constantFrom('a' as const, 'b' as const),
        (micros, shape) => {
          const shown = shownLineAmounts(micros, shape);
          const unit = shape === 'a' ? 1 : 0.01;
          const total = micros.reduce((s, m) => s + m, 0);
          expect(Math.round(shown.reduce((s, x) => s + x, 0) / unit) + 0).toBe(
            Math.round(shownAmount(total, shape) / unit) + 0,
          );
          // no line moves more than one shown unit from its exact amount
          for (const [i, x] of shown.entries())
            expect(Math.abs(x - (micros[i] as number) / 1e6)).toBeLessThanOrEqual(unit + 1e-9);
        },
      ),
      { seed: 11, numRuns: 2_000 },
    );
  });

  it('rounds with plain numbers exactly as with BigInt, up to the largest amounts', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: -(2 ** 50), max: 2 ** 50 }),
          fc.constantFrom(2 ** 50 - 1, 2 ** 50 - 500_000, 1_125_899_906_342_624),
        ),
        fc.constantFrom(10_000, 1_000_000),
        (micro, unit) => {
          const abs = BigInt(Math.abs(micro));
          const exact = (micro < 0 ? -1 : 1) * Number((2n * abs + BigInt(unit)) / (2n * BigInt(unit)));
          expect(roundMicro(micro, unit)).toBe(exact);
        },
      ),
      { seed: 7, numRuns: 5_000 },
    );
  });

  it('multiplies bytes by micro-prices exactly past 2^53', () => {
    expect(mulDivHalfUp(9_000_000_000_000_000, 999_000_000, GB)).toBe(8_991_000_000_000_000);
    expect(mulDivHalfUp(1, 500_000, GB)).toBe(0);
    expect(mulDivHalfUp(1, 500_000_000, GB)).toBe(1);
  });
});

describe('the watermark fee', () => {
  it('charges video by the tier at or above the short side of its frame, and nothing for music', () => {
    const fee = (h: number) => watermarkFeeMicro('video', { width: Math.round((h * 16) / 9), height: h }) / M;
    expect([
      fee(360),
      fee(480),
      fee(720),
      fee(721),
      fee(900),
      fee(1080),
      fee(1440),
      fee(2160),
      fee(2161),
      fee(4320),
    ]).toEqual([1500, 1500, 1500, 3500, 3500, 3500, 5000, 5000, 10000, 10000]);
    // a phone's portrait video pays by its real resolution, not by its height
    const portrait = (width: number, height: number) => watermarkFeeMicro('video', { width, height }) / M;
    expect([portrait(720, 1280), portrait(1080, 1920), portrait(2160, 3840)]).toEqual([1500, 3500, 5000]);
    expect(watermarkFeeMicro('music', null)).toBe(0);
  });
});

describe('periods and subscriptions', () => {
  it('are calendar months in UTC, half-open', () => {
    expect(periodOf(Date.UTC(2026, 1, 1))).toEqual({ start: Date.UTC(2026, 1, 1), end: Date.UTC(2026, 2, 1) });
    expect(periodOf(Date.UTC(2026, 2, 1) - 1).start).toBe(Date.UTC(2026, 1, 1));
    expect(periodOf(Date.UTC(2026, 11, 31, 23, 59)).end).toBe(Date.UTC(2027, 0, 1));
    expect(periodNamed('2026-13')).toBeUndefined();
    // Date.UTC would take years 0–99 for 1900–1999
    expect(new Date((periodNamed('0050-01') as { start: number }).start).getUTCFullYear()).toBe(50);
    expect(new Date((periodNamed('0099-12') as { end: number }).end).toISOString()).toBe('0100-01-01T00:00:00.000Z');
    expect(monthsBetween(periodOf(Date.UTC(2026, 10, 5)), periodOf(Date.UTC(2027, 1, 5)))).toBe(3);
  });

  it('charges a year at 1,009.80 in the months each term begins, and a month in every month it is live', () => {
    expect(annualPrice(99 * M)).toBe(1_009_800_000);
    const yearly = subscription({
      interval: 'year',
      priceMicro: annualPrice(99 * M),
      startedAt: Date.UTC(2026, 10, 20),
    });
    const charged = (s: SubscriptionRow, y: number, m: number) =>
      subscriptionCharge(s, periodOf(Date.UTC(y, m, 2)))?.amountMicro ?? 0;
    expect([
      charged(yearly, 2026, 10),
      charged(yearly, 2026, 11),
      charged(yearly, 2027, 9),
      charged(yearly, 2027, 10),
    ]).toEqual([1_009_800_000, 0, 0, 1_009_800_000]);
    const cancelled = { ...yearly, endsAt: endOnCancel(yearly, Date.UTC(2027, 2, 3)) };
    expect(cancelled.endsAt).toBe(Date.UTC(2027, 10, 1));
    expect(charged(cancelled, 2027, 10)).toBe(0);
    const monthly = subscription({});
    const ended = { ...monthly, endsAt: endOnCancel(monthly, Date.UTC(2026, 3, 30)) };
    expect([charged(monthly, 2025, 11), charged(ended, 2026, 3), charged(ended, 2026, 4)]).toEqual([0, 99 * M, 0]);
  });
});

describe("an admin's prices", () => {
  it('are read in APUSD to 6 decimals and whole counts; a monthly price alone sets the year at 15% off', () => {
    expect(readTerms({ monthlyPrice: 50, includedStreams: 5 })).toEqual({
      monthlyPriceMicro: 50 * M,
      annualPriceMicro: 510 * M,
      includedStreams: 5,
    });
    for (const bad of [
      { pricePerStream: 0.0000001 },
      { pricePerStream: 1e-9 },
      { pricePerGb: 2.0000004 },
      { includedGb: 1.5 },
      { revenueSharePct: 101 },
      { pricePerGb: -1 },
      { monthlyPrice: '50' },
      [],
    ]) {
      expect(() => readTerms(bad)).toThrow();
    }
    expect(readTerms({ pricePerStream: 0.000001, pricePerGb: 0.1 + 0.2 })).toEqual({
      pricePerStreamMicro: 1,
      pricePerGbMicro: 300_000,
    });
  });
});
