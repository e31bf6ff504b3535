import fs from 'node:fs';
import path from 'node:path';
import type { DtcwtBackend } from '../../gpu/backend.js';
import { DrmError } from '../errors.js';
import type { MediaBinaries } from '../media/binaries.js';
import { startPipeEncoder } from '../media/encode.js';
import { hlsMuxArgs, keyframeGridArgs, playlistIn } from '../media/hls.js';
import type { MediaInfo } from '../media/probe.js';
import { transcode } from '../media/transcode.js';
import { VIDEO_REFERENCE } from '../watermark/reference.js';
import { openVideoMarking } from '../watermark/video-embed.js';

/** What packaging one item needs: the input, where its variants go, how to encrypt and encode. */
export interface PackageJob {
  bins: MediaBinaries;
  input: string;
  info: MediaInfo;
  /** the staging directory: variants are written to its plain/, a/ and b/ */
  dir: string;
  /** ffmpeg's key info file (see writeKeyInfo) */
  keyInfo: string;
  /** x264 quality (video) */
  crf: number;
  preset: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/** x264 on the keyframe grid, and the audio as AAC that every HLS player decodes. */
function videoCodecArgs(job: PackageJob, audioInput: number | undefined): string[] {
  const audio = job.info.audio && audioInput !== undefined
    ? ['-map', `${audioInput}:a:0`, '-c:a', 'aac', '-b:a', '160k', ...(job.info.audio.channels > 2 ? ['-ac', '2'] : [])]
    : [];
  return [
    ...audio,
    '-c:v', 'libx264', '-crf', String(job.crf), '-preset', job.preset, '-pix_fmt', 'yuv420p',
    ...keyframeGridArgs(),
  ];
}

/** A variant's directory in the staging area (plain, a or b), made on first use. */
export function variantDir(job: PackageJob, name: string): string {
  const dir = path.join(job.dir, name);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** One ffmpeg: decode, x264, AES-128 HLS into plain/. */
export async function packagePlainVideo(job: PackageJob): Promise<void> {
  const out = variantDir(job, 'plain');
  await transcode(job.bins, ['-i', job.input, '-map', '0:v:0', ...videoCodecArgs(job, 0), ...hlsMuxArgs(out, job.keyInfo), playlistIn(out)], {
    what: `the HLS segments of ${path.basename(job.input)}`,
    signal: job.signal,
    totalSeconds: job.info.duration,
    onProgress: job.onProgress,
  });
}

export interface MarkedVideoJob extends PackageJob {
  backend: DtcwtBackend;
  key: Buffer;
  contentId: string;
}

/**
 * Variants A and B from one decode: every frame is marked both ways in one transform and each
 * variant is piped to its own x264, which cuts segments on the same keyframe grid, so segment n
 * of A and of B cover the same frames. The original's audio goes into both. The same decode
 * writes the detection reference (../watermark/reference.ts).
 */
export async function packageMarkedVideo(job: MarkedVideoJob): Promise<{ frames: number }> {
  const marking = await openVideoMarking({ ...job, reference: path.join(job.dir, VIDEO_REFERENCE) });
  const { width, height, fps } = marking;
  const encoderFor = (name: 'a' | 'b') => {
    const out = variantDir(job, name);
    const args = [
      '-v', 'error', '-y',
      '-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-s', `${width}x${height}`, '-r', String(fps), '-i', 'pipe:0',
      ...(job.info.audio ? ['-i', job.input] : []),
      '-map', '0:v:0', ...videoCodecArgs(job, job.info.audio ? 1 : undefined),
      ...hlsMuxArgs(out, job.keyInfo),
    ];
    return startPipeEncoder(job.bins.ffmpeg, args, playlistIn(out), `variant ${name.toUpperCase()} of ${path.basename(job.input)}`);
  };
  const a = encoderFor('a');
  const b = encoderFor('b');
  let frames = 0;
  try {
    for await (const marked of marking.frames(() => 'both')) {
      await Promise.all([a.write(marked.A as Uint8Array), b.write(marked.B as Uint8Array)]);
      frames++;
      job.onProgress?.(frames, Math.max(marking.expectedFrames, frames));
    }
    job.signal?.throwIfAborted();
    if (frames === 0) throw new DrmError('BAD_REQUEST', `${path.basename(job.input)} has no video frames`);
    await Promise.all([a.finish(), b.finish()]);
  } catch (err) {
    await Promise.all([a.abort(), b.abort()]);
    throw err;
  }
  return { frames };
}
