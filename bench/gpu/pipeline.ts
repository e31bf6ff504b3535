/**
 * Ingest's media work on one clip, timed two ways with the same ffmpeg: the plain AES-128 HLS
 * transcode (x264 CRF 18 fast on the 10-s keyframe grid), and the watermarked path (one decode,
 * every frame marked A and B by the backend, two x264 encodes into two HLS directories). The
 * database, the store and the thumbnails are left out: they cost the same with any backend.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DtcwtBackend } from '../../gpu/backend.js';
import type { MediaBinaries } from '../../src/media/binaries.js';
import { hlsMuxArgs, keyframeGridArgs, playlistIn, writeKeyInfo } from '../../src/media/hls.js';
import { transcode } from '../../src/media/transcode.js';
import { yuvFrames } from '../../src/media/video-frames.js';
import { inOrder } from '../../src/watermark/in-order.js';
import { markFrames, patternLength, segmentGains, segmentPattern } from '../../src/watermark/video/mark.js';

export interface Clip {
  file: string;
  width: number;
  height: number;
  fps: number;
  seconds: number;
}

const X264 = ['-c:v', 'libx264', '-crf', '18', '-preset', 'fast', '-pix_fmt', 'yuv420p', ...keyframeGridArgs()];

/** A clip the benchmark makes for itself: ffmpeg's moving test pattern with grain, 1080p or as asked. */
export async function makeClip(bins: MediaBinaries, dir: string, width: number, height: number, seconds: number) {
  const file = path.join(dir, `clip-${width}x${height}-${seconds}s.mp4`);
  const source = `testsrc2=s=${width}x${height}:r=25,noise=alls=8:allf=t`;
  const args = ['-f', 'lavfi', '-i', source, '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast'];
  await transcode(bins, [...args, '-crf', '14', '-pix_fmt', 'yuv420p', file], { what: 'the test clip' });
  return { file, width, height, fps: 25, seconds } satisfies Clip;
}

export async function plainTranscode(bins: MediaBinaries, clip: Clip, dir: string): Promise<number> {
  const out = path.join(dir, 'plain');
  fs.mkdirSync(out, { recursive: true });
  const started = performance.now();
  const mux = hlsMuxArgs(out, writeKeyInfo(out, randomBytes(16)));
  await transcode(bins, ['-i', clip.file, '-map', '0:v:0', ...X264, ...mux, playlistIn(out)], { what: 'plain HLS' });
  return (performance.now() - started) / 1000;
}

function encoder(bins: MediaBinaries, clip: Clip, out: string) {
  fs.mkdirSync(out, { recursive: true });
  const input = ['-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-s', `${clip.width}x${clip.height}`, '-r', String(clip.fps)];
  const mux = hlsMuxArgs(out, writeKeyInfo(out, randomBytes(16)));
  const args = ['-v', 'error', '-y', ...input, '-i', 'pipe:0', ...X264, ...mux, playlistIn(out)];
  const child = spawn(bins.ffmpeg, args, { stdio: ['pipe', 'ignore', 'inherit'] });
  const done = new Promise<void>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`x264 encoder exited ${code}`)))),
  );
  const write = (frame: Uint8Array) =>
    new Promise<void>((resolve) => (child.stdin.write(frame) ? resolve() : child.stdin.once('drain', resolve)));
  return { write, done, end: () => child.stdin.end() };
}

async function* pairs(frames: AsyncIterable<Uint8Array>) {
  let held: Uint8Array | undefined;
  for await (const f of frames) {
    if (held) {
      yield [held, f];
      held = undefined;
    } else held = f;
  }
  if (held) yield [held];
}

/** Decode, mark A and B, encode both: seconds, and the frames marked. */
export async function markedTranscode(
  bins: MediaBinaries,
  clip: Clip,
  dir: string,
  backend: DtcwtBackend,
  window: number,
): Promise<{ seconds: number; frames: number }> {
  const count = patternLength(clip.width, clip.height);
  const gains = segmentGains(segmentPattern(randomBytes(32), 'bench-gpu', 0, count));
  const started = performance.now();
  const [a, b] = [encoder(bins, clip, path.join(dir, 'a')), encoder(bins, clip, path.join(dir, 'b'))];
  const source = pairs(yuvFrames(bins, clip.file, { width: clip.width, height: clip.height, fps: clip.fps }));
  let frames = 0;
  const mark = (run: Uint8Array[]) => markFrames(backend, run, clip.width, clip.height, gains, 'both');
  for await (const marked of inOrder(source, mark, window)) {
    for (const m of marked) {
      await Promise.all([a.write(m.A as Uint8Array), b.write(m.B as Uint8Array)]);
      frames++;
    }
  }
  a.end();
  b.end();
  await Promise.all([a.done, b.done]);
  return { seconds: (performance.now() - started) / 1000, frames };
}
