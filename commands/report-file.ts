import fs from 'node:fs';
import path from 'node:path';
import { badRequest } from '../src/errors.js';
import type { Output } from './output.js';

// `--report FILE` of `drm analyze` and `drm cases show`: the case's evidence report as one HTML file.

/** A report path whose folder is missing is refused before an analysis that may take minutes. */
export function checkReportPath(file: string | undefined): void {
  if (file === undefined) return;
  const dir = path.dirname(path.resolve(file));
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
    throw badRequest(`--report ${file}: the folder ${dir} does not exist`);
  if (fs.existsSync(file) && fs.statSync(file).isDirectory())
    throw badRequest(`--report ${file} is a folder, not a file`);
}

/** Writes the page; the line saying so goes to stderr under --json, whose stdout is the JSON alone. */
export function writeReportFile(out: Output, file: string, page: string): void {
  fs.writeFileSync(file, page);
  const line = `evidence report written to ${file}`;
  if (out.json) out.error(line);
  else out.write(line);
}
