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
