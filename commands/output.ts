import { createRequire } from 'node:module';
import type TableType from 'cli-table3';
import { DrmError } from '../src/errors.js';

/** How a command reports: JSON for scripts, tables and sentences for people. */
export interface Output {
  json: boolean;
  /** the core's field names as the flags of the running command (pricePerStream: --price) */
  flagNames?: Record<string, string>;
  write(text: string): void;
  error(text: string): void;
}

export function createOutput(json: boolean, flagNames?: Record<string, string>): Output {
  return {
    json,
    flagNames,
    write: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
    error: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
  };
}

export function printJson(out: Output, value: unknown): void {
  out.write(JSON.stringify(value, null, 2));
}

export function printTable(out: Output, head: string[], rows: Array<Array<string | number | boolean | null>>): void {
  // loaded when a table is printed, not by every command that starts
  const Table = createRequire(import.meta.url)('cli-table3') as typeof TableType;
  const cells = rows.map((r) => r.map((v) => (v === null ? '' : String(v))));
  const widths = foldedWidths([head, ...cells], terminalColumns());
  const table = new Table({
    head,
    style: { head: [], border: [] },
    ...(widths && { colWidths: widths, wordWrap: true, wrapOnWordBoundary: false }),
  });
  for (const r of cells) table.push(r);
  out.write(table.toString());
}

/** The terminal's width: the TTY's, or COLUMNS for output that is piped; none when neither says. */
function terminalColumns(): number | undefined {
  if (process.stdout.isTTY && process.stdout.columns) return process.stdout.columns;
  const columns = Number(process.env.COLUMNS);
  return Number.isInteger(columns) && columns >= 40 ? columns : undefined;
}

/**
 * Column widths that fit `columns` (borders and padding included), or undefined when the table
 * fits as it is: the widest column gives up a character at a time, so short columns (a status, a
 * count) stay whole and long ones (an id, a path, a detail) fold onto more lines.
 */
export function foldedWidths(lines: string[][], columns: number | undefined): number[] | undefined {
  if (columns === undefined) return undefined;
  const count = Math.max(...lines.map((l) => l.length));
  // each cell's text, one space of padding each side; the borders: one per column and one more
  const widths = Array.from({ length: count }, (_, i) => Math.max(1, ...lines.map((l) => (l[i] ?? '').length)) + 2);
  const room = columns - (count + 1);
  if (widths.reduce((a, b) => a + b, 0) <= room) return undefined;
  while (widths.reduce((a, b) => a + b, 0) > room) {
    const widest = widths.indexOf(Math.max(...widths));
    if ((widths[widest] as number) <= 5) break;
    widths[widest] = (widths[widest] as number) - 1;
  }
  return widths;
}

/** The CLI's one mapping of errors: a single line on stderr and an exit code (1; 2 for usage). */
export function reportError(out: Output, err: unknown): number {
  if (err instanceof DrmError && err.code !== 'INTERNAL_ERROR') {
    const message = inFlags(err.message, out.flagNames) + hintFor(err);
    if (out.json) out.error(JSON.stringify({ error: message, code: err.code }));
    else out.error(`drm: ${message}`);
    return err.code === 'BAD_REQUEST' ? 2 : 1;
  }
  const message = err instanceof Error ? err.message : String(err);
  out.error(`drm: ${message}`);
  return 1;
}

/** Where the command line can say what to do next: the command that lists what there is. */
function hintFor(err: DrmError): string {
  if (err.code === 'NOT_FOUND' && /^content \S+ not found$/.test(err.message))
    return '; drm content list shows the catalog';
  return '';
}

/**
 * The core's validators name the field they refuse first ("pricePerStream must be at least 0");
 * on the command line the user typed a flag, so the message names that flag instead.
 */
function inFlags(message: string, flagNames: Record<string, string> | undefined): string {
  // Only a validator's sentence about the field ("limit must be …"), not one about a thing of that
  // name ("content X not found").
  const field = /^(\w+) (?:must|should|needs|is not|is required|may not|cannot)\b/.exec(message)?.[1];
  const flag = field !== undefined && flagNames && Object.hasOwn(flagNames, field) ? flagNames[field] : undefined;
  return flag ? `${flag}${message.slice(field?.length)}` : message;
}
