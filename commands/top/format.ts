/** Short, fixed-width readings for the live view. */

export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value >= 100 || unit === 0 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

export const formatRate = (n: number): string => (n >= 100 ? String(Math.round(n)) : n.toFixed(1));

/** "12 s ago", "5 min ago", "3 h ago", "2 d ago" from an ISO time. */
export function ago(isoTime: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(isoTime)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** An id cut to its first characters, as `git` shortens hashes: enough to find it with drm cases show. */
export const shortId = (id: string, length = 8): string => (id.length > length ? id.slice(0, length) : id);

/** A bar of `width` cells for a share of 0..1. */
export function bar(share: number, width: number): string {
  const filled = Math.round(Math.max(0, Math.min(1, share)) * width);
  return '█'.repeat(filled) + '░'.repeat(width - filled);
}

/** Text cut (with an ellipsis) or padded to `cells`, so that what follows it lines up from line to line. */
export const padOrCut = (text: string, cells: number): string =>
  text.length > cells ? `${text.slice(0, cells - 1)}…` : text.padEnd(cells);

/**
 * Column widths that fit `room` cells: as commands/output.ts folds a table, the widest column
 * gives up a cell at a time, so short columns stay whole; here a cut cell ends in an ellipsis
 * (padOrCut) rather than folding, as a live view keeps one line per row.
 */
export function fitWidths(natural: number[], room: number, least = 4): number[] {
  const widths = [...natural];
  while (widths.reduce((a, b) => a + b, 0) > room) {
    const widest = widths.indexOf(Math.max(...widths));
    if ((widths[widest] as number) <= least) break;
    widths[widest] = (widths[widest] as number) - 1;
  }
  return widths;
}
