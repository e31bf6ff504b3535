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
import { type PackagingMeter, type StagePart, startPackagingMeter } from '../../src/domain/ingest/stage-times.js';
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
  return { bins, input: clip.file, info, dir, keyInfo, segmentSeconds: 10, crf: 18, preset: 'fast' };
}

/** Wall seconds, and where the CPU went (ingest's own packaging meter: processes, the mark's threads, drm's). */
export interface Packaged {
  seconds: number;
  parts?: StagePart[];
}

async function metered(work: (meter: PackagingMeter) => Promise<void>): Promise<Packaged> {
  const meter = startPackagingMeter();
  const started = performance.now();
  try {
    await meter.run(() => work(meter));
  } catch (e) {
    meter.finish();
    throw e;
  }
  const seconds = (performance.now() - started) / 1000;
  const parts = meter.finish();
  return { seconds, ...(parts && { parts }) };
}

/** The clip packaged unmarked, as `drm ingest` does without --watermark. */
export function plainTranscode(bins: MediaBinaries, clip: Clip, dir: string): Promise<Packaged> {
  const job = packageJob(bins, clip, dir);
  return metered(async (meter) => {
    await videoPackaging.plain(job);
    meter.ended('transcode');
  });
}

/** The clip packaged watermarked with this backend, as `drm ingest --watermark` does. */
export async function markedTranscode(
  bins: MediaBinaries,
  clip: Clip,
  dir: string,
  backend: DtcwtBackend,
): Promise<Packaged> {
  const job = packageJob(bins, clip, dir);
  const packaged = await metered(async (meter) => {
    meter.marksWith(backend);
    await packageVariants(job, await variantsOf(job, backend), videoPackaging.markedArgs(job), meter);
  });
  for (const v of ['a', 'b'])
    if (!fs.existsSync(playlistIn(path.join(dir, v)))) throw new Error(`variant ${v} has no playlist`);
  return packaged;
}

/** Variants A and B of the job's input, marked by the backend with a key of the bench's own. */
function variantsOf(job: PackageJob, backend: DtcwtBackend) {
  return watermarkEngine('video').variants({
    bins: job.bins,
    key: randomBytes(32),
    contentId: 'bench-gpu',
    input: job.input,
    info: job.info,
    referenceDir: job.dir,
    segmentSeconds: job.segmentSeconds,
    stills: stillOutputs(job.info, job.dir),
    backend: async () => backend,
  });
}
