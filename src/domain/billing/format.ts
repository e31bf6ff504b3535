import type { ApiShape } from '../../config.js';

/**
 * Money leaves the service here and only here. Shape A shows whole APUSD, Shape B decimals to the
 * cent; both round half up (away from zero for the rare negative amount), from the exact integer
 * micro-APUSD, so that no float ever holds money inside the service.
 */
export function roundMicro(micro: number, unitMicro: number): number {
  const sign = micro < 0 ? -1 : 1;
  const abs = Math.abs(micro);
  // 2·abs + unit stays an exact double below 2^51; BigInt only for the rare larger amount.
  if (abs < 2 ** 50) return sign * Math.floor((2 * abs + unitMicro) / (2 * unitMicro));
  const m = BigInt(abs);
  const u = BigInt(unitMicro);
  return sign * Number((2n * m + u) / (2n * u));
}

/** Micro-APUSD in one US cent (1 APUSD = 1 USD): the card processor counts in cents. */
export const MICRO_PER_CENT = 10_000;

/** An amount as the API shows it: whole APUSD (Shape A) or APUSD to the cent (Shape B). */
export const shownAmount = (micro: number, shape: ApiShape): number =>
  shape === 'a' ? roundMicro(micro, 1_000_000) : roundMicro(micro, 10_000) / 100;

/** For people (messages, tables): 1234.5 → "1,234.50". */
export function formatApusd(micro: number): string {
  const cents = roundMicro(micro, 10_000);
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
}

/**
 * Line amounts as shown, adding up to the total as shown. Rounded one by one, Shape A's whole
 * APUSD can miss (7.5 + 99 + 1009.5 shows 8 + 99 + 1010 = 1117 against a total of 1116), so the
 * shown units the lines lack or exceed are given to, or taken from, the lines whose exact amount
 * is nearest the other way: each line moves by one unit at most, and only where it was a near tie.
 */
export function shownLineAmounts(micros: readonly number[], shape: ApiShape): number[] {
  const unit = shape === 'a' ? 1_000_000 : 10_000;
  const units = micros.map((m) => roundMicro(m, unit));
  let missing =
    roundMicro(
      micros.reduce((s, m) => s + m, 0),
      unit,
    ) - units.reduce((s, u) => s + u, 0);
  // how far each exact amount lies above its rounded one, in units (-0.5 … 0.5)
  const above = micros.map((m, i) => m / unit - (units[i] as number));
  const order = micros.map((_, i) => i).sort((a, b) => (above[b] as number) - (above[a] as number));
  const nudge = (k: number, by: number) => {
    const i = order[k] as number;
    units[i] = (units[i] as number) + by;
  };
  for (let k = 0; missing > 0 && k < order.length; k++, missing--) nudge(k, 1);
  for (let k = order.length - 1; missing < 0 && k >= 0; k--, missing++) nudge(k, -1);
  return units.map((u) => (shape === 'a' ? u : u / 100));
}
