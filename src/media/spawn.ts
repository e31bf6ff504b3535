import { type ChildProcess, type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { trackChild } from './process-cpu.js';

/**
 * The one place that starts ffmpeg and ffprobe (fluent-ffmpeg is archived upstream, so plain
 * child_process behind this wrapper). Keeps the last lines of stderr for error messages and
 * never passes a shell.
 */
export interface MediaProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** Resolves when the process ends: exit code and the tail of what it wrote to stderr. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

const STDERR_TAIL = 4000;

/** The live children started under each signal, all stopped by the signal's one listener. */
const childrenOf = new WeakMap<AbortSignal, Set<ChildProcess>>();

/**
 * Stops the child with SIGTERM when the signal aborts. spawn's own `signal` option adds one
 * listener per child, and an analysis runs a dozen ffmpegs at once under one signal (Node warned
 * of a listener leak on every run); here each signal gets one listener, whatever the count.
 */
export function stopOnAbort(child: ChildProcess, signal: AbortSignal | undefined): void {
  if (!signal) return;
  if (signal.aborted) {
    child.kill('SIGTERM');
    return;
  }
  let live = childrenOf.get(signal);
  if (!live) {
    const children = new Set<ChildProcess>();
    live = children;
    childrenOf.set(signal, children);
    signal.addEventListener(
      'abort',
      () => {
        for (const c of children) c.kill('SIGTERM');
      },
      { once: true },
    );
  }
  live.add(child);
  child.once('exit', () => live.delete(child));
}

export function startMedia(bin: string, args: string[], signal?: AbortSignal): MediaProcess {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  stopOnAbort(child, signal);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-STDERR_TAIL);
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, sig) => resolve({ code, signal: sig, stderr }));
    },
  );
  return { child, done };
}

/** The last meaningful line ffmpeg wrote, for a one-line error message. */
export function lastLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines[lines.length - 1] ?? 'no output';
}
