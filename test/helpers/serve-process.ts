import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The real `drm` as a child process, for end-to-end tests and benchmarks: `drm serve` started
 * and awaited on its JSON line, and one-shot CLI runs. No vitest imports, so bench/ can use it.
 */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DRM_BIN = path.join(ROOT, 'bin/drm.js');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServeProcess {
  url: string;
  port: number;
  db: string;
  /** the whole listening line (url, port, db, apiShape, webhookWorker, trustProxy) */
  info: Record<string, unknown>;
  child: ChildProcess;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** Resolves once stderr contains the text (or matches the pattern); rejects if the process exits first. */
  waitForStderr(pattern: string | RegExp, timeoutMs?: number): Promise<void>;
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
  /** Sends the signal (SIGTERM by default) and waits for the exit; SIGKILL after killAfterMs. */
  stop(signal?: NodeJS.Signals, killAfterMs?: number): Promise<Exit>;
}

export interface ServeOptions {
  dataDir: string;
  db?: string;
  port?: number;
  logLevel?: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  nodeArgs?: string[];
  /** another checkout's bin/drm.js (a benchmark's baseline); default this one's */
  bin?: string;
  /** How long to wait for the listening line (start-up includes tsx compiling the sources). */
  timeoutMs?: number;
  /** another long-running command that prints one JSON line when ready (`['worker']`); default serve on `port` */
  command?: string[];
  /**
   * A file that takes the process's stderr instead of a pipe (a benchmark's access log, which
   * would otherwise pile up in this process); `stderr()` then reads it and `waitForStderr` polls it.
   */
  stderrTo?: string;
}

/** Every process started here, so that a test run or a benchmark can kill them all on the way out. */
const running = new Set<ChildProcess>();

export function killAll(): void {
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  running.clear();
}

function exitOf(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode as NodeJS.Signals | null });
      return;
    }
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

export function serveArgs(opts: ServeOptions): string[] {
  return [
    ...(opts.nodeArgs ?? []),
    opts.bin ?? DRM_BIN,
    ...(opts.command ?? ['serve', '--port', String(opts.port ?? 0)]),
    '--data-dir',
    opts.dataDir,
    '--json',
    '--log-level',
    opts.logLevel ?? 'warn',
    ...(opts.db ? ['--db', opts.db] : []),
    ...(opts.args ?? []),
  ];
}

/** Spawns `drm serve --json` and resolves with its address once it printed the listening line. */
export function startServe(opts: ServeOptions): Promise<ServeProcess> {
  const errFd = opts.stderrTo ? fs.openSync(opts.stderrTo, 'a') : undefined;
  const child = spawn(process.execPath, serveArgs(opts), {
    cwd: opts.bin ? path.dirname(path.dirname(opts.bin)) : ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', errFd ?? 'pipe'],
  });
  if (errFd !== undefined) fs.closeSync(errFd);
  running.add(child);
  const exited = exitOf(child);
  void exited.then(() => running.delete(child));
  let out = '';
  let piped = '';
  const errText = () => (opts.stderrTo ? fs.readFileSync(opts.stderrTo, 'utf8') : piped);
  const stderrWaiters = new Set<() => void>();
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => {
    piped += d;
    for (const check of stderrWaiters) check();
  });

  const waitForStderr = (pattern: string | RegExp, timeoutMs = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const matches = () => (typeof pattern === 'string' ? errText().includes(pattern) : pattern.test(errText()));
      const poll = opts.stderrTo ? setInterval(() => check(), 100) : undefined;
      const done = () => {
        clearTimeout(timer);
        clearInterval(poll);
        stderrWaiters.delete(check);
      };
      const check = () => {
        if (matches()) {
          done();
          resolve();
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`drm serve did not write ${String(pattern)} within ${timeoutMs} ms; stderr:\n${errText()}`));
      }, timeoutMs);
      stderrWaiters.add(check);
      check();
      void exited.then(() => {
        if (!stderrWaiters.has(check)) return;
        check();
        if (!stderrWaiters.has(check)) return;
        done();
        reject(new Error(`drm serve exited before writing ${String(pattern)}; stderr:\n${errText()}`));
      });
    });

  return new Promise<ServeProcess>((resolve, reject) => {
    const timeoutMs = opts.timeoutMs ?? 90_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`drm serve printed no listening line within ${timeoutMs} ms; stderr:\n${errText()}`));
    }, timeoutMs);
    let listening = false;
    const onData = (d: string) => {
      out += d;
      if (listening) return;
      const line = out.split('\n').find((l) => l.trim().startsWith('{') && l.trim().endsWith('}'));
      if (!line) return;
      listening = true;
      clearTimeout(timer);
      const info = JSON.parse(line) as { url: string; port: number; db: string };
      resolve({
        url: info.url,
        port: info.port,
        db: info.db,
        info,
        child,
        stderr: errText,
        waitForStderr,
        exited,
        async stop(signal = 'SIGTERM', killAfterMs = 30_000) {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          const kill = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
          const exit = await exited;
          clearTimeout(kill);
          return exit;
        },
      });
    };
    child.stdout?.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(
        new Error(
          `drm serve exited (code ${code}, signal ${signal}) before listening; stdout:\n${out}\nstderr:\n${errText()}`,
        ),
      );
    });
  });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one `drm …` command to its end. */
export function runDrm(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 90_000): Promise<CliResult> {
  const child = spawn(process.execPath, [DRM_BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return exitOf(child).then(({ code }) => {
    clearTimeout(timer);
    running.delete(child);
    return { code, stdout, stderr };
  });
}

/** Runs `drm …` and returns its stdout, throwing with its stderr when it fails. */
export async function drm(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const r = await runDrm(args, env);
  if (r.code !== 0) throw new Error(`drm ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}
