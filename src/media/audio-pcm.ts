import type { MediaBinaries } from './binaries.js';
import { type Range, rangeArgs, records } from './records.js';

export interface PcmOptions extends Range {
  sampleRate: number;
  /** samples per yielded block */
  blockSize?: number;
  /** an ffmpeg audio filter applied before the mix-down and resampling (a speed undone) */
  filter?: string;
  signal?: AbortSignal;
}

/** The audio mixed down to mono float samples at sampleRate, in blocks. */
export async function* monoPcm(bins: MediaBinaries, file: string, o: PcmOptions): AsyncGenerator<Float32Array> {
  const block = o.blockSize ?? 65_536;
  const args = [
    '-v',
    'error',
    ...rangeArgs(o),
    '-i',
    file,
    '-map',
    '0:a:0',
    ...(o.filter ? ['-af', o.filter] : []),
    '-ac',
    '1',
    '-ar',
    String(o.sampleRate),
    '-f',
    'f32le',
    'pipe:1',
  ];
  for await (const bytes of records(bins.ffmpeg, args, block * 4, `the audio of ${file}`, o.signal)) {
    yield new Float32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 4));
  }
}

/** A whole (short) range of audio as one array: for a 10-s segment, not for a film. */
export async function readMonoPcm(bins: MediaBinaries, file: string, o: PcmOptions): Promise<Float32Array> {
  const blocks: Float32Array[] = [];
  for await (const b of monoPcm(bins, file, o)) blocks.push(b);
  return concatSamples(blocks);
}

/** Pieces of samples joined into one array. */
export function concatSamples(
  pieces: readonly Float32Array[],
  length = pieces.reduce((n, p) => n + p.length, 0),
): Float32Array {
  const out = new Float32Array(length);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
