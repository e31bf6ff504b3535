import path from 'node:path';
import { DrmError } from '../../errors.js';
import { concatSamples } from '../../media/audio-pcm.js';
import type { MediaBinaries } from '../../media/binaries.js';
import type { FedProcess } from '../../media/encode.js';
import { type MediaInfo, probeMedia } from '../../media/probe.js';
import { lastLine, type MediaProcess, startMedia } from '../../media/spawn.js';
export { type FedProcess, startFed } from '../../media/encode.js';

/**
 * Plumbing for the music embedder and detector: the audio stream a file must have, a reader that
 * hands out consecutive spans of a decoded stream while keeping no more of it than the span asked
 * for, planar and interleaved samples, and the decoders' ends.
 */

/**
 * Consecutive spans of a stream of sample blocks. span(start, end) gives samples [start, end),
 * zeros where the stream has none (before 0 or past its end); starts must not go backwards,
 * and everything before the latest start is let go.
 */
export class SampleWindow {
  private buffer: Float32Array = new Float32Array(0);
  /** stream index of buffer[0] */
  private offset = 0;
  private ended = false;

  constructor(private readonly blocks: AsyncIterator<Float32Array>) {}

  async span(start: number, end: number): Promise<Float32Array> {
    if (start < this.offset && this.offset > 0) throw new Error('SampleWindow spans must not go backwards');
    await this.fill(end);
    this.drop(Math.max(0, start));
    const out = new Float32Array(Math.max(0, end - start));
    const from = Math.max(start, this.offset);
    const to = Math.min(end, this.offset + this.buffer.length);
    if (to > from) out.set(this.buffer.subarray(from - this.offset, to - this.offset), from - start);
    return out;
  }

  /** Stops the decoder behind the stream. */
  async close(): Promise<void> {
    await this.blocks.return?.();
  }

  private async fill(end: number): Promise<void> {
    const pieces: Float32Array[] = [this.buffer];
    let length = this.buffer.length;
    while (!this.ended && this.offset + length < end) {
      const next = await this.blocks.next();
      if (next.done) this.ended = true;
      else {
        pieces.push(next.value);
        length += next.value.length;
      }
    }
    if (pieces.length > 1) this.buffer = concatSamples(pieces, length);
  }

  private drop(before: number): void {
    const n = Math.min(this.buffer.length, before - this.offset);
    if (n <= 0) return;
    this.buffer = this.buffer.slice(n);
    this.offset += n;
  }
}

/** Interleaved frames (f32le from ffmpeg) into one array per channel. */
export function deinterleave(samples: Float32Array, channels: number): Float32Array[] {
  const frames = Math.floor(samples.length / channels);
  return Array.from({ length: channels }, (_, c) => {
    const plane = new Float32Array(frames);
    for (let i = 0; i < frames; i++) plane[i] = samples[i * channels + c] as number;
    return plane;
  });
}

export function interleave(planes: readonly Float32Array[]): Float32Array {
  const channels = planes.length;
  const frames = planes[0]?.length ?? 0;
  const out = new Float32Array(frames * channels);
  planes.forEach((plane, c) => {
    for (let i = 0; i < frames; i++) out[i * channels + c] = plane[i] as number;
  });
  return out;
}

/** The audio stream of a file, or a BAD_REQUEST saying why there is none to work on. */
export async function audioOf(
  bins: MediaBinaries,
  file: string,
  role: string,
): Promise<{ info: MediaInfo; sampleRate: number; channels: number }> {
  const info = await probeMedia(bins, file);
  const name = path.basename(file);
  if (!info.audio) throw new DrmError('BAD_REQUEST', `${role} ${name} has no audio stream`);
  const { sampleRate, channels } = info.audio;
  if (!(sampleRate > 0 && channels > 0))
    throw new DrmError('BAD_REQUEST', `${role} ${name} has an audio stream without a sample rate or channels`);
  return { info, sampleRate, channels };
}

/** ffmpeg decoding a file's first audio stream to interleaved f32 samples, at the rate and channels given. */
export function decodeInterleaved(
  bins: MediaBinaries,
  file: string,
  audio: { sampleRate: number; channels: number },
  signal?: AbortSignal,
): MediaProcess {
  const format = ['-ac', String(audio.channels), '-ar', String(audio.sampleRate), '-f', 'f32le'];
  return startMedia(bins.ffmpeg, ['-v', 'error', '-i', file, '-map', '0:a:0', ...format, 'pipe:1'], signal);
}

/** Stops whatever of these processes still runs, and waits for them all. */
export async function stop(...processes: (MediaProcess | FedProcess)[]): Promise<void> {
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all(processes.map((p) => p.done.catch(() => undefined)));
}

/** Waits for a decoder to end, and turns a failure into a BAD_REQUEST naming the file. */
export async function finishDecoder(decoder: MediaProcess, file: string, signal?: AbortSignal): Promise<void> {
  const { code, stderr } = await decoder.done;
  signal?.throwIfAborted();
  if (code !== 0)
    throw new DrmError('BAD_REQUEST', `could not decode the audio of ${path.basename(file)}: ${lastLine(stderr)}`);
}
