import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES } from '../../commands/help.js';
import { DRM_BIN, drm, runDrm } from '../helpers/serve-process.js';

// --help with an example per command and required options marked; usage
// errors that point at the command's own help; messages that name the flags typed; completion.

const T = 120_000;

/** Every command path with no subcommands, from the real definitions (the help of each is read). */
async function leafCommands(): Promise<string[]> {
  const bash = await drm(['completion', 'bash']);
  const paths = [...bash.matchAll(/^ {4}'([^']*)'\) words='([^']*)'/gm)].map((m) => ({
    path: m[1] as string,
    words: (m[2] as string).split(' '),
  }));
  return paths.filter((p) => p.path !== '' && !p.words.some((w) => !w.startsWith('-'))).map((p) => p.path);
}

describe('the CLI conventions', () => {
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-cli-'));
    await drm(['migrate', '--data-dir', dir]);
  }, T);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it(
    'gives every command an example of itself in --help, and marks its required options',
    async () => {
      const leaves = await leafCommands();
      expect(leaves).toEqual(
        expect.arrayContaining([
          'serve',
          'ingest',
          'analyze',
          'top',
          'admin billing credit',
          'content delete',
          'completion',
        ]),
      );
      expect(Object.keys(EXAMPLES).sort()).toEqual([...leaves].sort());
      for (const leaf of leaves) {
        for (const example of EXAMPLES[leaf] ?? []) expect(example, leaf).toContain(`drm ${leaf}`);
      }
      const ingest = await drm(['ingest', '--help']);
      expect(ingest).toMatch(/--title <title>\s+catalog title \(required\)/);
      expect(ingest).toContain('Examples:\n  $ drm ingest film.mp4 --title "The Film" --type video --watermark');
      const credit = await drm(['admin', 'billing', 'credit', '--help']);
      expect(credit).toMatch(/--amount <apusd>[^\n]*\(required\)/);
      expect(credit).toContain('Example:\n  $ drm admin billing credit');
    },
    T,
  );

  it('ends quietly with its own exit code when the reader of its output goes away (drm … | head)', async () => {
    const child = spawn(process.execPath, [DRM_BIN, 'completion', 'bash'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // The reading end closes before a byte is read: every write of drm meets a closed pipe.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });

  it(
    "points a usage error at the command's own help",
    async () => {
      const missing = await runDrm(['ingest', 'film.mp4']);
      expect(missing.code).toBe(2);
      expect(missing.stderr.trim()).toBe(
        "drm: required option '--title <title>' not specified (see drm ingest --help)",
      );
      const unknown = await runDrm(['admin', 'billing', 'credit', '--org', 'x', '--amount', '1', '--bogus']);
      expect(unknown.stderr).toContain("unknown option '--bogus' (see drm admin billing credit --help)");
      const typo = await runDrm(['admni']);
      expect(typo.stderr).toContain('(Did you mean admin?) (see drm --help)');
      // a mistyped required option is the mistake to name, not the option it left missing
      const titel = await runDrm(['ingest', 'film.mp4', '--titel', 'X', '--type', 'video']);
      expect([titel.code, titel.stderr.trim()]).toEqual([
        2,
        "drm: unknown option '--titel' (Did you mean --title?) (see drm ingest --help)",
      ]);
    },
    T,
  );

  it(
    'names the flag the user typed in a refusal, not the field behind it',
    async () => {
      const org = '00000000-0000-0000-0000-000000000000';
      const rate = await runDrm(['admin', 'rate-limit', '--org', org, '--monthly-streams', '0.5', '--data-dir', dir]);
      expect(rate.stderr.trim()).toBe('drm: --monthly-streams must be a whole number');
      const license = await runDrm([
        'admin',
        'license',
        '--org',
        org,
        '--content',
        'nope',
        '--type',
        'video',
        '--data-dir',
        dir,
      ]);
      expect(license.stderr.trim()).toBe('drm: --content must be a content UUID or *');
      // one rule for --amount, said the same way on both sides of it
      for (const amount of ['0', '-5']) {
        const credit = await runDrm([
          'admin',
          'billing',
          'credit',
          '--org',
          org,
          '--amount',
          amount,
          '--data-dir',
          dir,
        ]);
        expect(credit.stderr.trim()).toBe('drm: --amount must be a number of APUSD above 0 and at most 1,000,000');
      }
      const list = await runDrm(['content', 'list', '--limit', '1000', '--data-dir', dir, '--json']);
      expect(JSON.parse(list.stderr)).toMatchObject({
        error: '--limit must be a whole number from 1 to 200',
        code: 'BAD_REQUEST',
      });
    },
    T,
  );

  it(
    'folds wide tables to the terminal: drm doctor at 80 columns has no line over 80',
    async () => {
      const doctor = await runDrm(['doctor', '--data-dir', dir], { COLUMNS: '80' });
      const lines = doctor.stdout.trimEnd().split('\n');
      expect(lines.length).toBeGreaterThan(5);
      expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(80);
      // without a width to fit, a table keeps its natural width
      const wide = await runDrm(['doctor', '--data-dir', dir], { COLUMNS: '' });
      expect(Math.max(...wide.stdout.split('\n').map((l) => l.length))).toBeGreaterThan(80);
    },
    T,
  );

  it(
    'completes commands, subcommands and flags in bash, and files where a file goes',
    async () => {
      const script = await drm(['completion', 'bash']);
      const complete = (...words: string[]) => {
        const line = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _drm; echo "\${COMPREPLY[*]}"`;
        const r = spawnSync('bash', ['--norc', '--noprofile', '-c', line], { encoding: 'utf8' });
        expect(r.stderr).toBe('');
        return r.stdout.trim();
      };
      expect(complete('drm', 'in')).toBe('ingest');
      expect(complete('drm', 'admin', 'bil')).toBe('billing');
      expect(complete('drm', 'admin', 'billing', 'credit', '--org', 'ORG', '--am')).toBe('--amount');
      expect(complete('drm', 'top', '--')).toContain('--server');
      expect(complete('drm', 'ingest', 'zz-no-such-file')).toBe('');
      const zsh = await drm(['completion', 'zsh']);
      expect(zsh.startsWith('#compdef drm\n')).toBe(true);
      expect(zsh).toContain('bashcompinit');
      const wrong = await runDrm(['completion', 'fish']);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('completion is for bash or zsh');
    },
    T,
  );
});
