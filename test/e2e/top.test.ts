import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Overview } from '../../src/domain/operations/overview.js';
import { registerOver } from '../helpers/fixtures.js';
import { makePanFilm } from '../helpers/media.js';
import { DRM_BIN, drm, ROOT, runDrm, type ServeProcess, startServe } from '../helpers/serve-process.js';

// Drm top for real, in a tmux terminal (send-keys, capture-pane), on the
// database of a running drm serve; and on the server itself with an admin token, as a script would.

const T = 180_000;
const ADMIN_WALLET = '0x1111111111111111111111111111111111111111';
const SOCKET = `drm-top-${process.pid}`;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
const pane = () => tmux('capture-pane', '-p', '-t', 'top');

async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the pane shows:\n${pane()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('drm top', () => {
  let dir: string;
  let server: ServeProcess;
  let apiKey: string;
  let filmId: string;
  // Traffic for the dashboard, made by each test that reads it (the view shows the last minute
  // only, and a loaded machine may take that long between tests): a refused session and an unknown route.
  const makeTraffic = async () => {
    await fetch(`${server.url}/api/v1/stream/no-such-content`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: '{"viewerId":"v1"}',
    });
    await fetch(`${server.url}/api/v1/nothing-here`);
    await play();
  };
  // alice's player: a session of the film, its playlist, and every segment it names.
  const play = async () => {
    const res = await fetch(`${server.url}/api/v1/stream/${filmId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: '{"viewerId":"alice"}',
    });
    expect(res.status).toBe(201);
    const { playlistUrl } = (await res.json()) as { playlistUrl: string };
    const playlist = await (await fetch(`${server.url}${playlistUrl}`)).text();
    for (const uri of playlist.split('\n').filter((l) => l.includes('/segment/'))) {
      const segment = await fetch(`${server.url}${uri}`);
      expect(segment.status).toBe(200);
      await segment.arrayBuffer();
    }
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-top-'));
    server = await startServe({ dataDir: dir, port: 0, timeoutMs: T });
    const org = await registerOver(server.url, 'Top Films');
    apiKey = org.apiKey;
    await drm(['admin', 'grant', ADMIN_WALLET, '--data-dir', dir]);
    // A plain film of two segments (no watermark: quick to ingest), licensed to the organization.
    const film = makePanFilm(path.join(dir, 'film.mp4'), 12);
    const ingest = ['ingest', film, '--title', 'Pan Film', '--type', 'video', '--data-dir', dir, '--json'];
    filmId = (JSON.parse(await drm(ingest)) as { contentId: string }).contentId;
    const license = ['admin', 'license', '--org', org.organizationId, '--content', filmId, '--type', 'video'];
    await drm([...license, '--data-dir', dir]);
  }, T);

  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {}
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(
    "runs live in a terminal: the server's traffic shows, it follows a resize, and q leaves the terminal as it was",
    async () => {
      // A clean environment: ink draws only a final frame where it thinks it runs in CI. A script, so
      // that the command line is short and the line before it stays in view on a narrow terminal.
      const script = path.join(dir, 'top.sh');
      fs.writeFileSync(
        script,
        `env -i PATH="${process.env.PATH}" HOME="${os.homedir()}" TERM=xterm-256color "${process.execPath}" "${DRM_BIN}" top --data-dir "${dir}"\necho "top exited $?"\n`,
      );
      tmux('new-session', '-d', '-s', 'top', '-x', '120', '-y', '40', '-c', ROOT, 'bash', '--norc', '--noprofile');
      tmux('send-keys', '-t', 'top', 'clear; echo before-top', 'Enter');
      tmux('send-keys', '-t', 'top', `bash ${script}`, 'Enter');
      await makeTraffic();
      // The server adds its counts to the database every 5 s; the view reads whole buckets.
      // Both requests, which may land in different buckets: the first flush can hold one of them alone.
      await until(
        'the traffic to show',
        () =>
          /requests \/ min\s+[1-9]/.test(pane()) &&
          /refused \/ min \(4xx\)\s+[1-9]/.test(pane()) &&
          /Pan Film\s+alice/.test(pane()),
        90_000,
      );
      const wide = pane();
      fs.writeFileSync(path.join(dir, 'top-wide.txt'), wide);
      const lines = wide.split('\n');
      expect(lines.find((l) => l.includes('Streaming'))).toContain('Forensics queue');
      expect(wide).toMatch(/refused \/ min \(4xx\)\s+[1-9]/);
      expect(wide).toMatch(/servers running\s+1/);
      // alice's session, by the name her organization gave her, with the bytes per second sent to it
      expect(wide).toMatch(/active sessions\s+1 \(1 open\)/);
      expect(wide).toMatch(/Now playing[\s\S]*Pan Film\s+alice\s+Top Films\s+[\d.]+ (B|kB|MB)\/s/);
      expect(wide).toContain('Billing');
      expect(wide).toContain('q or Ctrl-C to quit');
      expect(wide).not.toContain('before-top');

      tmux('resize-window', '-t', 'top', '-x', '70', '-y', '50');
      await until('the narrow layout', () => {
        const p = pane();
        return (
          p.includes('Forensics queue') &&
          !(p.split('\n').find((l) => l.includes('Streaming')) ?? '').includes('Forensics queue')
        );
      });
      const narrow = pane();
      fs.writeFileSync(path.join(dir, 'top-narrow.txt'), narrow);
      expect(narrow.split('\n').every((l) => l.length <= 70)).toBe(true);
      expect(narrow).toMatch(/Pan Film\s+alice\s+Top Films\s+[\d.]+ (B|kB|MB)\/s/);

      tmux('send-keys', '-t', 'top', 'q');
      await until('drm top to exit', () => pane().includes('top exited 0'));
      const after = pane();
      expect(after).toContain('before-top');
      expect(after).not.toContain('Streaming');
      expect(after).not.toContain('Forensics queue');
    },
    T,
  );

  it(
    'quits on Ctrl-C too, with the terminal restored',
    async () => {
      tmux('send-keys', '-t', 'top', 'clear; echo again', 'Enter');
      tmux('send-keys', '-t', 'top', `bash ${path.join(dir, 'top.sh')}`, 'Enter');
      await until('the dashboard', () => pane().includes('active sessions'));
      tmux('send-keys', '-t', 'top', 'C-c');
      await until('drm top to exit', () => pane().includes('top exited 0'));
      expect(pane()).not.toContain('active sessions');
    },
    T,
  );

  it(
    'prints one snapshot for a script: plain when piped, JSON with --json, from the server with an admin token',
    async () => {
      // Piped, and run from another directory than the repository's (its tsconfig must still apply).
      const plain = spawnSync(process.execPath, [DRM_BIN, 'top', '--data-dir', dir], {
        cwd: os.tmpdir(),
        encoding: 'utf8',
      });
      expect(plain.stderr).toBe('');
      expect(plain.stdout).toContain('active sessions');
      expect(plain.stdout).toMatch(/Ingest queue[\s\S]*no ingest running/);
      expect(plain.stdout).not.toContain('\x1b[?1049h');
      // the server runs, idle or not: it writes its bucket every 5 s
      expect(plain.stdout).toMatch(/servers running\s+1 /);
      const token = (await drm(['admin', 'token', '--wallet', ADMIN_WALLET, '--data-dir', dir])).trim();
      await makeTraffic();
      let fromServer: Overview | undefined;
      const deadline = Date.now() + 60_000;
      const shown = (o: Overview | undefined) =>
        o !== undefined && o.traffic.clientErrorsPerMinute > 0 && o.nowPlaying.length > 0;
      while (!shown(fromServer) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 1000));
        // DRM_DATA_DIR set for the servers does not stand in the way of --server.
        fromServer = JSON.parse(
          await drm(['top', '--server', server.url, '--json'], { DRM_ADMIN_TOKEN: token, DRM_DATA_DIR: dir }),
        ) as Overview;
      }
      expect(fromServer?.traffic.clientErrorsPerMinute).toBeGreaterThan(0);
      expect(fromServer?.traffic.servers).toBe(1);
      expect(fromServer?.nowPlaying[0]).toMatchObject({
        title: 'Pan Film',
        externalViewerId: 'alice',
        organizationName: 'Top Films',
        bytesPerSecond: expect.any(Number),
      });
      expect(fromServer?.nowPlaying[0]?.viewerId).toMatch(/^[0-9a-f-]{36}$/);
      expect(fromServer?.sessions.active).toBeGreaterThanOrEqual(1);
      expect(fromServer?.billing.period).toMatch(/^\d{4}-\d{2}$/);
      expect(fromServer?.ingest).toEqual({ waiting: 0, running: 0, jobs: [], failedLastHour: 0, lastFailure: null });
    },
    T,
  );

  it(
    'says what is wrong: no token for --server, a wrong token, --db with --server, no deployment',
    async () => {
      const noToken = await runDrm(['top', '--server', server.url], { DRM_ADMIN_TOKEN: '' });
      expect(noToken.code).toBe(2);
      expect(noToken.stderr).toContain('--server needs an admin token');
      const wrong = await runDrm(['top', '--server', server.url, '--token', 'not-a-token']);
      expect(wrong.stderr).toMatch(/answered 401: admin token is invalid or expired \(INVALID_ADMIN_TOKEN\)/);
      const both = await runDrm(['top', '--server', server.url, '--token', 'x', '--data-dir', dir]);
      expect(both.stderr).toContain('--data-dir reads a database here');
      const none = await runDrm(['top', '--data-dir', path.join(dir, 'nothing')]);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('names no deployment');
      const notAdmin = await runDrm([
        'admin',
        'token',
        '--wallet',
        '0x2222222222222222222222222222222222222222',
        '--data-dir',
        dir,
      ]);
      expect(notAdmin.stderr).toContain('is not a platform admin (grant it first');
    },
    T,
  );
});
