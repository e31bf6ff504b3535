import path from 'node:path';
import { startPipeEncoder } from '../media/encode.js';
import { hlsMuxArgs, playlistIn } from '../media/hls.js';
import { transcode } from '../media/transcode.js';
import { openMusicVariants } from '../watermark/music-variants.js';
import { MUSIC_REFERENCE, writeMusicReference } from '../watermark/reference.js';
import { SEGMENT_SECONDS } from '../watermark/segments.js';
import { type PackageJob, variantDir } from './package-video.js';

/** Music is served as audio-only TS segments of AAC, which hls.js and Safari play. */
const AAC = ['-c:a', 'aac', '-b:a', '192k'];

export async function packagePlainMusic(job: PackageJob): Promise<void> {
  const out = variantDir(job, 'plain');
  await transcode(job.bins, ['-i', job.input, '-map', '0:a:0', ...AAC, ...hlsMuxArgs(out, job.keyInfo), playlistIn(out)], {
    what: `the HLS segments of ${path.basename(job.input)}`,
    signal: job.signal,
    totalSeconds: job.info.duration,
    onProgress: job.onProgress,
  });
}

/** Variants A and B of every 10-s segment from one decode, each piped to its own AAC encoder; then the detection reference. */
export async function packageMarkedMusic(job: PackageJob & { key: Buffer; contentId: string }): Promise<{ segments: number }> {
  const music = await openMusicVariants(job);
  const encoderFor = (name: 'a' | 'b') => {
    const out = variantDir(job, name);
    const args = ['-v', 'error', '-y', '-f', 'f32le', '-ar', String(music.sampleRate), '-ac', String(music.channels), '-i', 'pipe:0', ...AAC, ...hlsMuxArgs(out, job.keyInfo)];
    return startPipeEncoder(job.bins.ffmpeg, args, playlistIn(out), `variant ${name.toUpperCase()} of ${path.basename(job.input)}`);
  };
  const a = encoderFor('a');
  const b = encoderFor('b');
  const bytes = (x: Float32Array) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  let segments = 0;
  try {
    for await (const s of music.segments()) {
      await Promise.all([a.write(bytes(s.a)), b.write(bytes(s.b))]);
      segments = s.index + 1;
      const total = music.duration || segments * SEGMENT_SECONDS;
      job.onProgress?.(Math.min(total, segments * SEGMENT_SECONDS), total);
    }
    job.signal?.throwIfAborted();
    await Promise.all([a.finish(), b.finish()]);
  } catch (err) {
    await Promise.all([a.abort(), b.abort()]);
    throw err;
  }
  await writeMusicReference(job.bins, job.input, path.join(job.dir, MUSIC_REFERENCE), job.signal);
  return { segments };
}
