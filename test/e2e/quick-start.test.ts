import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// The README's quick start, pasted block by block into a real bash in tmux, as a reader would:
// `npm install && npx drm serve` in one window, the whole story in another. The commands are read
// from README.md, never copied here, so the README stays true. The directory is a copy of the
// checkout as a clone of it would hold it (tracked and untracked files that git does not ignore),
// with the repository's node_modules hard-linked in, so that `npm install` finds everything there
// and only builds dist/; npm runs offline.

const ROOT = path.resolve(__dirname, '../..');
const TEST_TIMEOUT = 20 * 60_000;
const STEP_TIMEOUT = 10 * 60_000;
const PORT = 8080; // the README's curl commands name it
const SOCKET = `drm-quick-start-${process.pid}`;

const has = (cmd: string, args: string[]) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
const canRun = has('tmux', ['-V']) && has('git', ['-C', ROOT, 'rev-parse', '--git-dir']);

const tmux = (args: string[], input?: string) =>
  execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8', input });
/** Everything a window showed, its history included, wrapped lines joined. */
const transcript = (win: string) => tmux(['capture-pane', '-p', '-J', '-S', '-', '-t', `qs:${win}`]);
/** What the window shows now (the alternate screen while a full-screen program runs). */
const screen = (win: string) => tmux(['capture-pane', '-p', '-t', `qs:${win}`]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  show: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the window shows:\n${show()}`);
    await sleep(500);
  }
}

/** The fenced sh blocks of the README's "## Quick start" section, in order. */
function quickStartBlocks(): string[] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Quick start\n');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

/** The story block cut at its `# N.` lines: [number, text] for each step. */
function storySteps(block: string): Array<[number, string]> {
  const steps: Array<[number, string]> = [];
  for (const line of block.split('\n')) {
    const numbered = /^# (\d+)\. /.exec(line);
    if (numbered) steps.push([Number(numbered[1]), '']);
    const last = steps.at(-1);
    if (last) last[1] += `${line}\n`;
  }
  return steps.map(([n, text]) => [n, text.trim()]);
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** A copy of the checkout as a clone of it holds it, with node_modules hard-linked in. */
function copyCheckout(into: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '-co', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    const from = path.join(ROOT, file);
    const stat = fs.lstatSync(from, { throwIfNoEntry: false });
    if (!stat) continue; // deleted in the working tree
    fs.mkdirSync(path.dirname(path.join(into, file)), { recursive: true });
    if (stat.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), path.join(into, file));
    else if (stat.isFile()) fs.copyFileSync(from, path.join(into, file));
  }
  execFileSync('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(into, 'node_modules')]);
}

/** A plain login-less bash: the user's PATH without this run's node_modules/.bin, npm offline, no CI. */
function shellCommand(): string {
  const PATH = [
    path.dirname(process.execPath),
    ...(process.env.PATH ?? '').split(':').filter((p) => p && !p.includes('node_modules')),
  ].join(':');
  const env = {
    PATH,
    HOME: os.homedir(),
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  const assignments = Object.entries(env).map(([k, v]) => `${k}='${v.replace(/'/g, `'\\''`)}'`);
  return `env -i ${assignments.join(' ')} bash --norc --noprofile`;
}

/** Pastes text as a terminal does (bracketed, since bash asks for it), then presses Enter. */
function paste(win: string, text: string): void {
  tmux(['load-buffer', '-b', 'qs', '-'], text);
  tmux(['paste-buffer', '-p', '-d', '-b', 'qs', '-t', `qs:${win}`]);
  tmux(['send-keys', '-t', `qs:${win}`, 'Enter']);
}

let marks = 0;
/** Runs `echo rc=$?` after what was sent, waits for its line, and returns the status. */
async function statusAfter(win: string): Promise<number> {
  const mark = `quick-start-mark-${++marks}`;
  tmux(['send-keys', '-t', `qs:${win}`, `echo "${mark} rc=$?"`, 'Enter']);
  const pattern = new RegExp(`${mark} rc=(\\d+)`);
  await until(
    `"${mark}"`,
    () => pattern.test(transcript(win)),
    STEP_TIMEOUT,
    () => transcript(win),
  );
  return Number(pattern.exec(transcript(win))?.[1]);
}

const STACK_FRAME = /^\s+at .+:\d+:\d+\)?$/m;

describe('the quick start of the README', () => {
  let dir: string | undefined;
  let tmuxStarted = false;

  afterAll(async () => {
    if (tmuxStarted) {
      try {
        tmux(['send-keys', '-t', 'qs:serve', 'C-c']);
        const deadline = Date.now() + 30_000;
        while (!(await portIsFree(PORT)) && Date.now() < deadline) await sleep(250);
      } catch {}
      try {
        tmux(['kill-server']);
      } catch {}
    }
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it.runIf(canRun)(
    'runs as written on a fresh copy: install, serve, register, ingest, stream, record, trace, report, top',
    async (ctx) => {
      if (!(await portIsFree(PORT))) ctx.skip(`port ${PORT}, which the README's commands name, is in use`);
      const blocks = quickStartBlocks();
      expect(blocks.length).toBe(2);
      const [setup, story] = blocks as [string, string];

      // inside the checkout (an ignored folder), so that node_modules can be hard-linked: the
      // system's temporary folder may be another file system
      fs.mkdirSync(path.join(ROOT, '.test-tmp'), { recursive: true });
      dir = fs.mkdtempSync(path.join(ROOT, '.test-tmp', 'quick-start-'));
      const clone = path.join(dir, 'drm');
      copyCheckout(clone);
      fs.writeFileSync(path.join(dir, 'tmux.conf'), 'set -g history-limit 100000\n');
      const conf = path.join(dir, 'tmux.conf');
      tmux([
        '-f',
        conf,
        'new-session',
        '-d',
        '-s',
        'qs',
        '-n',
        'serve',
        '-x',
        '200',
        '-y',
        '50',
        '-c',
        clone,
        shellCommand(),
      ]);
      tmuxStarted = true;
      tmux(['new-window', '-d', '-t', 'qs', '-n', 'story', '-c', clone, shellCommand()]);

      // The first block: the clone is the copy made above, `npm test` is not for here; the rest is pasted.
      const setupLines = setup.trim().split('\n');
      expect(setupLines[0]).toMatch(/^git clone .* drm && cd drm$/);
      expect(setupLines.some((l) => l.startsWith('npm test'))).toBe(true);
      paste('serve', setupLines.filter((l) => !/^(git clone|npm test)/.test(l)).join('\n'));
      await until(
        'drm serve to answer /ready',
        () =>
          fetch(`http://127.0.0.1:${PORT}/ready`).then(
            (r) => r.ok,
            () => false,
          ),
        STEP_TIMEOUT,
        () => transcript('serve'),
      );

      // The story, step by step, in the second window; a failing command says so through the trap
      // (whose own line, as typed, does not read "failed").
      tmux(['send-keys', '-t', 'qs:story', `trap 'echo "quick-start: fail""ed ($?): $BASH_COMMAND"' ERR`, 'Enter']);
      const steps = storySteps(story);
      expect(steps.map(([n]) => n)).toEqual([1, 2, 3, 4, 5, 6]);
      for (const [n, text] of steps) {
        const lines = text.split('\n').filter((l) => !/^(chromium|npx drm top)\b/.test(l));
        paste('story', lines.join('\n'));
        expect(await statusAfter('story'), `step ${n}:\n${transcript('story')}`).toBe(0);
        expect(transcript('story')).not.toContain('quick-start: failed');
        if (n === 1) expect(JSON.parse(fs.readFileSync(path.join(clone, 'org.json'), 'utf8')).apiKey).toMatch(/^drm_/);
      }
      const told = transcript('story');
      expect(told).toContain('strong_match');
      expect(told).toMatch(/\balice\b/);

      // `chromium case.html` needs a display: the report is there and names the viewer.
      const report = fs.readFileSync(path.join(clone, 'case.html'), 'utf8');
      expect(report).toContain('<html');
      expect(report).toContain('alice');

      // `npx drm top`: it draws the live view; q leaves it.
      const top = story.split('\n').find((l) => l.startsWith('npx drm top'));
      expect(top).toBeDefined();
      paste('story', top as string);
      await until(
        'drm top to draw',
        () => screen('story').includes('active sessions'),
        120_000,
        () => screen('story'),
      );
      tmux(['send-keys', '-t', 'qs:story', 'q']);
      // Nothing typed until it has left the screen: its keyboard would read it.
      await until(
        'drm top to quit',
        () => !screen('story').includes('active sessions'),
        30_000,
        () => screen('story'),
      );
      expect(await statusAfter('story')).toBe(0);

      if (process.env.DRM_STORY_TRANSCRIPT === '1') console.log(transcript('story'));
      for (const win of ['serve', 'story']) expect(transcript(win)).not.toMatch(STACK_FRAME);
    },
    TEST_TIMEOUT,
  );
});
