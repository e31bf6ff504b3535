import { type ChildProcessByStdio, spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { DrmError } from '../errors.js';
import { lastLine, stopOnAbort } from './spawn.js';
import { trackChild } from './process-cpu.js';

/**
 * An ffmpeg fed on stdin (startMedia in ./spawn.ts only reads): marked frames and samples are
 * piped in as they are made, never held whole. write() waits until the chunk has gone to the pipe,
 * so a slow encoder holds the producer back instead of letting data pile up in memory, and the
 * chunk's memory is free again once it resolves.
 */
const STDERR_TAIL = 4000;

export interface FedProcess {
  child: ChildProcessByStdio<Writable, null, Readable>;
  /** Writes a chunk, waiting until it has gone to the pipe, so that samples never pile up in memory. */
  write(chunk: Uint8Array): Promise<void>;
  /** Resolves when the process ends: exit code, signal and the tail of its stderr. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

export function startFed(bin: string, args: string[], signal?: AbortSignal): FedProcess {
  const child = spawn(bin, args, { stdio: ['pipe', 'ignore', 'pipe'] });
  trackChild(child);
  stopOnAbort(child, signal);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-STDERR_TAIL);
  });
  let exited = false;
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve, reject) => {
      child.once('error', (err) => {
        exited = true;
        reject(err);
      });
      child.once('close', (code, sig) => {
        exited = true;
        resolve({ code, signal: sig, stderr });
      });
    },
  );
  // EPIPE when ffmpeg dies early; the caller learns why from done, in ffmpeg's own words.
  child.stdin.on('error', () => undefined);
  // Resolves once the chunk has gone to the pipe: its memory may then be reused (a frame pool).
  const write = (chunk: Uint8Array) =>
    new Promise<void>((resolve, reject) => {
      if (exited || child.stdin.destroyed) return reject(new Error('the encoder has stopped'));
      const stopped = () => settle(new Error('the encoder has stopped'));
      const settle = (err?: Error | null) => {
        child.off('close', stopped);
        if (err) reject(err);
        else resolve();
      };
      child.once('close', stopped);
      child.stdin.write(chunk, settle);
    });
  return { child, write, done };
}

export interface PipeEncoder {
  write(chunk: Uint8Array): Promise<void>;
  /** Closes stdin and waits for ffmpeg to finish the file; rejects (and removes it) if it failed. */
  finish(): Promise<void>;
  /** Stops ffmpeg and removes the partial output (a failed or cancelled run leaves no file). */
  abort(): Promise<void>;
}

/** A fed ffmpeg that writes `output`: the file exists only if the encode finished. */
export function startPipeEncoder(bin: string, args: string[], output: string, what: string): PipeEncoder {
  const fed = startFed(bin, [...args, output]);
  const failure = (stderr: string) => new DrmError('INTERNAL_ERROR', `could not encode ${what}: ${lastLine(stderr)}`);
  return {
    async write(chunk) {
      try {
        await fed.write(chunk);
      } catch {
        throw failure((await fed.done).stderr);
      }
    },
    async finish() {
      fed.child.stdin.end();
      const { code, stderr } = await fed.done;
      if (code !== 0) {
        fs.rmSync(output, { force: true });
        throw failure(stderr);
      }
    },
    async abort() {
      fed.child.kill('SIGKILL');
      await fed.done.catch(() => undefined);
      fs.rmSync(output, { force: true });
    },
  };
}
