/** Money is integer micro-APUSD inside the service; these convert at the edges. */
export const MICRO = 1_000_000;
export const toMicro = (apusd: number): number => Math.round(apusd * MICRO);
export const fromMicro = (micro: number): number => micro / MICRO;
