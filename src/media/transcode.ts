import { DrmError } from '../errors.js';
import type { MediaBinaries } from './binaries.js';
import { lastLine, startMedia } from './spawn.js';

export interface TranscodeOptions {
  /** what is being made, for the error message */
  what: string;
  signal?: AbortSignal;
  /** seconds of output expected, for progress */
  totalSeconds?: number;
  onProgress?: (doneSeconds: number, totalSeconds: number) => void;
}

/**
 * Runs one ffmpeg command to its end, reporting how far it got from `-progress` (out_time_us),
 * and turns a failure into one line in ffmpeg's own words.
 */
export async function transcode(bins: MediaBinaries, args: string[], o: TranscodeOptions): Promise<void> {
  const p = startMedia(bins.ffmpeg, ['-v', 'error', '-nostats', '-progress', 'pipe:1', '-y', ...args], o.signal);
  const total = o.totalSeconds ?? 0;
  let buffered = '';
  p.child.stdout.setEncoding('utf8').on('data', (d: string) => {
    buffered += d;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const m = /^out_time_us=(\d+)/.exec(line);
      if (m && total > 0) o.onProgress?.(Math.min(total, Number(m[1]) / 1e6), total);
    }
  });
  const { code, stderr } = await p.done;
  o.signal?.throwIfAborted();
  if (code !== 0) throw new DrmError('BAD_REQUEST', `could not make ${o.what}: ${lastLine(stderr)}`);
}
