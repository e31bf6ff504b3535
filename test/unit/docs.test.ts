import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCS_OPENAPI, docsOpenApiText } from '../../server/openapi/write-docs.js';

// The README and docs/ stay true to the repository: the API reference is the one the code serves,
// every link and every path they name exists, the README stays short, and its commands are drm's.

const ROOT = path.resolve(__dirname, '../..');
/** The SHA-256 of the interface specification drm implements, as the team was given it. */
const SPEC_SHA256 = '1b87c3095911a55e8fc69118528d9a0d3f1fc47975b845ac3794b3f3d0047bb8';

/** README.md and docs/*.md, but not docs/interface-spec.md: that one is the spec, copied as it is. */
const DOCS = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md') && f !== 'interface-spec.md')
    .map((f) => `docs/${f}`),
];
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The text outside fenced code blocks, line by line (blanks where a block was, so line numbers hold). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (line.startsWith('```')) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped (not hyphens), spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown file's headings make, a repeated one numbered as GitHub numbers it. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(read(file))) {
    const heading = /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Where an issue tracker's number is named: "issue 17", "issues 18 and 19", "#17", "PR 3". */
const ISSUE_REFERENCE = /\b(?:issues?|pull requests?|PRs?)\s+#?\d+|(?:^|[\s(])#\d+(?![\w-])/im;

/** Names in backticks that look like a file or folder of the repository. */
const REPO_PATH = /^(?:src|server|commands|test|bench|docs|gpu|bin|scripts|contracts)\/[\w.*/-]*$/;

function exists(repoPath: string): boolean {
  if (!repoPath.includes('*')) return fs.existsSync(path.join(ROOT, repoPath));
  // a glob in the last part: some file of that folder matches it
  const dir = path.join(ROOT, path.dirname(repoPath));
  const pattern = new RegExp(`^${path.basename(repoPath).replace(/\./g, '\\.').replace(/\*/g, '.*')}$`);
  return fs.existsSync(dir) && fs.readdirSync(dir).some((f) => pattern.test(f));
}

/** Every command path drm defines ('admin billing show', …), from its own completion script. */
function drmCommands(): Set<string> {
  const script = execFileSync(process.execPath, [path.join(ROOT, 'bin/drm.js'), 'completion', 'bash'], {
    encoding: 'utf8',
  });
  return new Set([...script.matchAll(/^\s*'([a-z -]+)'\) words=/gm)].map((m) => m[1] as string));
}

/** The commands the README's table names: `drm a b` cells, and `c` after a slash as a sibling of the one before. */
function readmeTableCommands(): string[] {
  const lines = read('README.md').split('\n');
  const start = lines.findIndex((l) => l.startsWith('## Commands at a glance'));
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  const named: string[] = [];
  for (const row of lines.slice(start, end).filter((l) => l.startsWith('| `'))) {
    const cell = row.split(/(?<!\\)\|/)[1] as string;
    let previous: string[] = [];
    for (const code of cell.matchAll(/`([^`]+)`/g)) {
      const words = (code[1] as string).split(/\s+/);
      const typed = words[0] === 'drm' ? words.slice(1) : [...previous.slice(0, -1), ...words];
      // the command's words end where its arguments begin (FILE, ID, bash\|zsh, --flags)
      const end = typed.findIndex((w) => !/^[a-z][a-z-]*$/.test(w));
      const command = end === -1 ? typed : typed.slice(0, end);
      named.push(command.join(' '));
      previous = command;
    }
  }
  return named;
}

describe('the API reference in docs/', () => {
  it('holds the OpenAPI document a default server serves (npm run docs:openapi writes it again)', () => {
    expect(fs.readFileSync(DOCS_OPENAPI, 'utf8')).toBe(docsOpenApiText());
  });

  it('holds the interface spec as it was given, unedited (a deviation is documented in docs/api.md, not made there)', () => {
    const text = fs.readFileSync(path.join(ROOT, 'docs/interface-spec.md'));
    expect(createHash('sha256').update(text).digest('hex')).toBe(SPEC_SHA256);
  });
});

describe('the README and docs/', () => {
  it('link only to files that exist, and to headings those files have', () => {
    const broken: string[] = [];
    for (const file of DOCS) {
      prose(read(file)).forEach((line, i) => {
        for (const link of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = link[1] as string;
          if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
          const [where, anchor] = target.split('#') as [string, string | undefined];
          const linked = where === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), where));
          if (!fs.existsSync(path.join(ROOT, linked))) broken.push(`${file}:${i + 1}: ${target} (no such file)`);
          else if (anchor !== undefined && linked.endsWith('.md') && !anchorsOf(linked).has(anchor))
            broken.push(`${file}:${i + 1}: ${target} (no such heading in ${linked})`);
        }
      });
    }
    expect(broken).toEqual([]);
  });

  it('name no issue of a tracker (they say what is, not which task made it)', () => {
    expect(ISSUE_REFERENCE.test('as issue 17 asked')).toBe(true);
    expect(ISSUE_REFERENCE.test('fixed in #17.')).toBe(true);
    expect(ISSUE_REFERENCE.test('the target (issue\n17): 5 s')).toBe(true);
    expect(ISSUE_REFERENCE.test('see [it](#48-forensics), colour #fff, spec 4.8')).toBe(false);
    // the whole text at once: a reference may be broken over two lines ("issue\n17")
    const found = DOCS.flatMap((file) => {
      const text = read(file);
      return [...text.matchAll(new RegExp(ISSUE_REFERENCE.source, 'gim'))].map(
        (m) => `${file}:${text.slice(0, m.index).split('\n').length}: ${m[0].trim()}`,
      );
    });
    expect(found).toEqual([]);
  });

  it('keep the README within 250 lines', () => {
    expect(read('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(250);
  });

  it("name only drm's own commands in the README's table", () => {
    const named = readmeTableCommands();
    expect(named.length).toBeGreaterThan(15);
    const defined = drmCommands();
    expect(named.filter((c) => !defined.has(c))).toEqual([]);
  });

  it('name only paths of the repository that exist', () => {
    const missing: string[] = [];
    for (const file of DOCS) {
      prose(read(file)).forEach((line, i) => {
        for (const code of line.matchAll(/`([^`]+)`/g)) {
          const name = code[1] as string;
          if (REPO_PATH.test(name) && !exists(name)) missing.push(`${file}:${i + 1}: ${name}`);
        }
      });
    }
    expect(missing).toEqual([]);
  });
});
