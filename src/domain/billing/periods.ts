/** A billing period: one calendar month in UTC, half-open [start, end). */
export interface Period {
  start: number;
  end: number;
}

export function periodOf(ms: number): Period {
  const d = new Date(ms);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return { start, end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

export const nextPeriod = (p: Period): Period => periodOf(p.end);
export const previousPeriod = (p: Period): Period => periodOf(p.start - 1);

/** 2026-10 for October 2026. */
export const periodLabel = (p: Period): string => new Date(p.start).toISOString().slice(0, 7);

/** The period a label such as 2026-10 names, or undefined for anything else. */
export function periodNamed(label: string): Period | undefined {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(label);
  return m ? periodOf(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1)) : undefined;
}

/** Whole calendar months from period a to period b (b later). */
export function monthsBetween(a: Period, b: Period): number {
  const x = new Date(a.start);
  const y = new Date(b.start);
  return (y.getUTCFullYear() - x.getUTCFullYear()) * 12 + (y.getUTCMonth() - x.getUTCMonth());
}
