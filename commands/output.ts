import Table from 'cli-table3';
import { DrmError } from '../src/errors.js';

/** How a command reports: JSON for scripts, tables and sentences for people. */
export interface Output {
  json: boolean;
  write(text: string): void;
  error(text: string): void;
}

export function createOutput(json: boolean): Output {
  return {
    json,
    write: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
    error: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
  };
}

export function printJson(out: Output, value: unknown): void {
  out.write(JSON.stringify(value, null, 2));
}

export function printTable(out: Output, head: string[], rows: Array<Array<string | number | boolean | null>>): void {
  const table = new Table({ head, style: { head: [], border: [] } });
  for (const r of rows) table.push(r.map((v) => (v === null ? '' : String(v))));
  out.write(table.toString());
}

/** The CLI's one mapping of errors: a single line on stderr and an exit code (1; 2 for usage). */
export function reportError(out: Output, err: unknown): number {
  if (err instanceof DrmError && err.code !== 'INTERNAL_ERROR') {
    if (out.json) out.error(JSON.stringify({ error: err.message, code: err.code }));
    else out.error(`drm: ${err.message}`);
    return err.code === 'BAD_REQUEST' ? 2 : 1;
  }
  const message = err instanceof Error ? err.message : String(err);
  out.error(`drm: ${message}`);
  return 1;
}
