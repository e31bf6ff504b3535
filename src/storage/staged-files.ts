import fs from 'node:fs';
import path from 'node:path';

/** Every file under `dir`, by its name relative to it with `/` between parts, sorted. */
export function filesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const name = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(name);
      else found.push(name);
    }
  };
  walk('');
  return found.sort();
}

/** A file name as ingest gives them: relative, `/`-separated, no `..`, nothing hidden. */
export function isItemFileName(name: string): boolean {
  return (
    name.length > 0 &&
    name.length <= 200 &&
    name.split('/').every((part) => /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(part) && part !== '..')
  );
}

/** The files of a staged item that are its content (not the staging's owner mark). */
export const itemFilesUnder = (dir: string): string[] =>
  filesUnder(dir).filter((n) => isItemFileName(n) && n !== 'owner.json');
