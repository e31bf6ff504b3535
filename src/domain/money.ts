/** Money is integer micro-APUSD inside the service; these convert at the edges. */
export const MICRO = 1_000_000;
export const toMicro = (apusd: number): number => Math.round(apusd * MICRO);
export const fromMicro = (micro: number): number => micro / MICRO;

/**
 * Whether an APUSD amount is a whole number of micro-APUSD (at most 6 decimals, up to the float
 * noise of writing it in decimal). Compared in micro units: 1e-9 APUSD is 0.001 micro, which an
 * absolute test at 1e-9 APUSD would let through and round to 0.
 */
export const hasSixDecimalsAtMost = (apusd: number): boolean =>
  Math.abs(apusd * MICRO - toMicro(apusd)) <= 1e-6 * Math.max(1, Math.abs(apusd));
