/**
 * Ingest's media work on one clip, timed two ways through the product's own packaging: the plain
 * AES-128 HLS transcode (x264 CRF 18 fast on the 10-s keyframe grid, with the catalog's stills),
 * and the watermarked one (one decode, every frame marked A and B by the backend in pooled frame
 * memory, two x264 encodes into two HLS directories, the detection reference and the stills from
 * the same decode). The database, the source check and publishing are left out: they cost the
 * same with any backend.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DtcwtBackend } from '../../gpu/backend.js';
import { videoPackaging } from '../../src/domain/ingest/package-video.js';
import { type PackageJob, packageVariants } from '../../src/domain/ingest/packaging.js';
import { stillOutputs } from '../../src/domain/ingest/previews.js';
import type { MediaBinaries } from '../../src/media/binaries.js';
import { playlistIn, writeKeyInfo } from '../../src/media/hls.js';
import type { MediaInfo } from '../../src/media/probe.js';
import { transcode } from '../../src/media/transcode.js';
import { watermarkEngine } from '../../src/watermark/engine.js';

export interface Clip {
  file: string;
  width: number;
  height: number;
  fps: number;
  seconds: number;
}

/** A clip the benchmark makes for itself: ffmpeg's moving test pattern with grain, 1080p or as asked. */
export async function makeClip(bins: MediaBinaries, dir: string, width: number, height: number, seconds: number) {
  const file = path.join(dir, `clip-${width}x${height}-${seconds}s.mp4`);
  const source = `testsrc2=s=${width}x${height}:r=25,noise=alls=8:allf=t`;
  const args = ['-f', 'lavfi', '-i', source, '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast'];
  await transcode(bins, [...args, '-crf', '14', '-pix_fmt', 'yuv420p', file], { what: 'the test clip' });
  return { file, width, height, fps: 25, seconds } satisfies Clip;
}

/**
 * What ingest packages from, for the clip made above. Stated rather than probed: the payload that
 * runs this on a GPU machine carries ffmpeg and not ffprobe.
 */
function packageJob(bins: MediaBinaries, clip: Clip, dir: string): PackageJob {
  const info: MediaInfo = {
    duration: clip.seconds,
    formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
    video: { codec: 'h264', width: clip.width, height: clip.height, fps: clip.fps },
  };
  const keyInfo = writeKeyInfo(dir, randomBytes(16));
  return { bins, input: clip.file, info, dir, keyInfo, crf: 18, preset: 'fast' };
}

/** Seconds to package the clip unmarked, as `drm ingest` does without --watermark. */
export async function plainTranscode(bins: MediaBinaries, clip: Clip, dir: string): Promise<number> {
  const job = packageJob(bins, clip, dir);
  const started = performance.now();
  await videoPackaging.plain(job);
  return (performance.now() - started) / 1000;
}

/** Seconds to package the clip watermarked with this backend, as `drm ingest --watermark` does. */
export async function markedTranscode(
  bins: MediaBinaries,
  clip: Clip,
  dir: string,
  backend: DtcwtBackend,
): Promise<number> {
  const job = packageJob(bins, clip, dir);
  const started = performance.now();
  const variants = await watermarkEngine('video').variants({
    bins,
    key: randomBytes(32),
    contentId: 'bench-gpu',
    input: clip.file,
    info: job.info,
    referenceDir: dir,
    stills: stillOutputs(job.info, dir),
    backend: async () => backend,
  });
  await packageVariants(job, variants, videoPackaging.markedArgs(job));
  const seconds = (performance.now() - started) / 1000;
  for (const v of ['a', 'b'])
    if (!fs.existsSync(playlistIn(path.join(dir, v)))) throw new Error(`variant ${v} has no playlist`);
  return seconds;
}
