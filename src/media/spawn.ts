import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

/**
 * The one place that starts ffmpeg and ffprobe (DESIGN.md: fluent-ffmpeg is archived, so plain
 * child_process behind this wrapper). Keeps the last lines of stderr for error messages and
 * never passes a shell.
 */
export interface MediaProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** Resolves when the process ends: exit code and the tail of what it wrote to stderr. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

const STDERR_TAIL = 4000;

export function startMedia(bin: string, args: string[], signal?: AbortSignal): MediaProcess {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], signal });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-STDERR_TAIL);
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve, reject) => {
    child.once('error', (err) => {
      if ((err as NodeJS.ErrnoException).code === 'ABORT_ERR') resolve({ code: null, signal: 'SIGTERM', stderr });
      else reject(err);
    });
    child.once('close', (code, sig) => resolve({ code, signal: sig, stderr }));
  });
  return { child, done };
}

/** The last meaningful line ffmpeg wrote, for a one-line error message. */
export function lastLine(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines[lines.length - 1] ?? 'no output';
}
