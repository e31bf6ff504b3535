/** A billing period: one calendar month in UTC, half-open [start, end). */
export interface Period {
  start: number;
  end: number;
}

/**
 * The first instant of a month in UTC. Date.UTC takes a year from 0 to 99 for 1900–1999, so a
 * period written 0050-01 would have been January 1950; the year is set on its own instead.
 */
export function utcMonthStart(year: number, month: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, 1);
  return d.getTime();
}

export function periodOf(ms: number): Period {
  const d = new Date(ms);
  return {
    start: utcMonthStart(d.getUTCFullYear(), d.getUTCMonth()),
    end: utcMonthStart(d.getUTCFullYear(), d.getUTCMonth() + 1),
  };
}

export const nextPeriod = (p: Period): Period => periodOf(p.end);
export const previousPeriod = (p: Period): Period => periodOf(p.start - 1);

/** 2026-10 for October 2026. */
export const periodLabel = (p: Period): string => new Date(p.start).toISOString().slice(0, 7);

/** The period a label such as 2026-10 names, or undefined for anything else. */
export function periodNamed(label: string): Period | undefined {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(label);
  return m ? periodOf(utcMonthStart(Number(m[1]), Number(m[2]) - 1)) : undefined;
}

/** Whole calendar months from period a to period b (b later). */
export function monthsBetween(a: Period, b: Period): number {
  const x = new Date(a.start);
  const y = new Date(b.start);
  return (y.getUTCFullYear() - x.getUTCFullYear()) * 12 + (y.getUTCMonth() - x.getUTCMonth());
}
