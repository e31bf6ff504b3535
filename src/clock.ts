/** Time comes from here so that tests can move it (rate windows, cooldowns, expiry). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that tests set and advance by hand. */
export class ManualClock implements Clock {
  constructor(private t = Date.UTC(2026, 0, 5, 12, 0, 0)) {}
  now(): number {
    return this.t;
  }
  set(ms: number): void {
    this.t = ms;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export const iso = (ms: number) => new Date(ms).toISOString();
export const HOUR_MS = 3_600_000;

/** The first instant (UTC) of the calendar month of `now`: where monthly stream counts start. */
export function monthStart(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
