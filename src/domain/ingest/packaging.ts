import fs from 'node:fs';
import path from 'node:path';
import type { MediaBinaries } from '../../media/binaries.js';
import { startPipeEncoder } from '../../media/encode.js';
import { hlsMuxArgs, playlistIn } from '../../media/hls.js';
import type { MediaInfo } from '../../media/probe.js';
import type { MarkedVariants } from '../../watermark/engine.js';
import type { PackagingMeter } from './stage-times.js';

/** What packaging one item needs: the input, where its variants go, how to encrypt and encode. */
export interface PackageJob {
  bins: MediaBinaries;
  input: string;
  info: MediaInfo;
  /** the staging directory: variants are written to its plain/, a/ and b/ */
  dir: string;
  /** ffmpeg's key info file (see writeKeyInfo) */
  keyInfo: string;
  /** how long each segment is (seconds): the keyframe grid, the muxer's cut and the mark's segments */
  segmentSeconds: number;
  /** x264 quality (video) */
  crf: number;
  preset: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/** How one kind of content becomes AES-128 HLS: unmarked in one ffmpeg, or its marked variants encoded. */
export interface Packaging {
  plain(job: PackageJob): Promise<void>;
  /** the encoder options after the marked pieces' raw input (more inputs, maps, codecs), up to the HLS muxer */
  markedArgs(job: PackageJob): string[];
}

/** A variant's directory in the staging area (plain, a or b), made on first use. */
export function variantDir(job: PackageJob, name: string): string {
  const dir = path.join(job.dir, name);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Variants A and B from one decode, each piped to its own encoder, which cuts segments on the
 * same grid, so segment n of A and of B cover the same frames or samples; then what the variants
 * leave to do (the detection reference).
 */
export async function packageVariants(
  job: PackageJob,
  variants: MarkedVariants,
  codecArgs: string[],
  meter?: PackagingMeter,
): Promise<void> {
  const encoderFor = (name: 'a' | 'b') => {
    const out = variantDir(job, name);
    const args = [
      '-v',
      'error',
      '-y',
      ...variants.rawInput,
      ...codecArgs,
      ...hlsMuxArgs(out, job.keyInfo, job.segmentSeconds),
    ];
    return startPipeEncoder(
      job.bins.ffmpeg,
      args,
      playlistIn(out),
      `variant ${name.toUpperCase()} of ${path.basename(job.input)}`,
    );
  };
  const a = encoderFor('a');
  const b = encoderFor('b');
  try {
    for await (const piece of variants.pieces()) {
      await Promise.all([a.write(piece.a), b.write(piece.b)]);
      piece.release?.();
      job.onProgress?.(piece.done, piece.total);
    }
    // The pieces end once the decoder has exited; the encoders then finish what they hold.
    meter?.ended('decode');
    job.signal?.throwIfAborted();
    await Promise.all([a.finish(), b.finish()]);
    meter?.ended('encode-a-and-b');
  } catch (err) {
    await Promise.all([a.abort(), b.abort()]);
    throw err;
  }
  await variants.finish();
  meter?.ended('reference');
}
