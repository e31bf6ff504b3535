import path from 'node:path';
import type { DtcwtBackend } from '../../gpu/backend.js';
import { DrmError } from '../errors.js';
import type { MediaBinaries } from '../media/binaries.js';
import { probeMedia } from '../media/probe.js';
import { detectMusic } from './music/detect.js';
import { embedMusic } from './music/embed.js';
import { MUSIC_REFERENCE } from './music/reference.js';
import { openMusicVariants } from './music/variants.js';
import type { DetectJob, Detection, EmbedJob } from './segments.js';
import { type DetectStage, detectVideo } from './video/detect.js';
import { embedVideo, type VideoEmbedResult } from './video/embed.js';
import { VIDEO_REFERENCE } from './video/reference.js';
import { openVideoVariants } from './video/variants.js';

export type { DetectStage } from './video/detect.js';
export type { BackendSource, MarkedVariants, VariantPiece, VariantsRequest } from './engine-types.js';
import type { BackendSource, MarkedVariants, VariantsRequest } from './engine-types.js';

/**
 * The front door to the watermark engine: embedding a viewer's copy, making variants A and B for
 * ingest, and reading a leak are chosen here, once, by the kind of media. `drm watermark`,
 * ingest and leak analysis all come through it; ./video/ and ./music/ hold the two engines.
 */
export type MediaKind = 'video' | 'music';

/** The kinds a file can be marked or read as: video if it has a video stream, music if it has audio. */
export async function kindsIn(bins: MediaBinaries, file: string): Promise<MediaKind[]> {
  const info = await probeMedia(bins, file);
  return [...(info.video ? (['video'] as const) : []), ...(info.audio ? (['music'] as const) : [])];
}

/** The kind a file is taken as when nobody names one: its video if it has any, otherwise its music. */
export async function kindOf(bins: MediaBinaries, file: string): Promise<MediaKind> {
  return (await kindsIn(bins, file))[0] ?? 'music';
}

export interface EmbedRequest extends EmbedJob {
  backend: BackendSource;
  /** frames (video) or seconds (music) done of those expected */
  onProgress?: (done: number, total: number) => void;
}

/** The copy written: video says which backend marked it, music how far below the music the mark lies. */
export type EmbeddedCopy =
  | { kind: 'video'; backend: string; result: VideoEmbedResult }
  | { kind: 'music'; result: { segments: number; sampleRate: number; snrDb: number } };

export interface DetectRequest extends DetectJob {
  /** `original` is the detection reference ingest kept (video makes one from an original otherwise) */
  reference?: boolean;
  backend: BackendSource;
  /** music reports its one pass as 'score' */
  onProgress?: (stage: DetectStage, done: number, total: number) => void;
}

interface KindEngine {
  /** the detection reference's file name beside the packaged content */
  referenceFile: string;
  embed(o: EmbedRequest): Promise<EmbeddedCopy>;
  variants(o: VariantsRequest): Promise<MarkedVariants>;
  detect(o: DetectRequest): Promise<Detection>;
}

function backendOf(o: { backend?: BackendSource }): Promise<DtcwtBackend> {
  if (!o.backend) throw new DrmError('INTERNAL_ERROR', 'watermarking video needs a DTCWT backend');
  return o.backend();
}

const engines: Record<MediaKind, KindEngine> = {
  video: {
    referenceFile: VIDEO_REFERENCE,
    async embed(o) {
      const backend = await o.backend();
      return { kind: 'video', backend: backend.name, result: await embedVideo({ ...o, backend }) };
    },
    async variants(o) {
      const backend = await backendOf(o);
      return openVideoVariants({ ...o, backend, reference: path.join(o.referenceDir, VIDEO_REFERENCE) });
    },
    async detect(o) {
      return detectVideo({ ...o, backend: await o.backend() });
    },
  },
  music: {
    referenceFile: MUSIC_REFERENCE,
    async embed(o) {
      return { kind: 'music', result: await embedMusic(o) };
    },
    variants: openMusicVariants,
    detect(o) {
      return detectMusic({ ...o, onProgress: (done, total) => o.onProgress?.('score', done, total) });
    },
  },
};

/** The engine for one kind of media. */
export function watermarkEngine(kind: MediaKind): KindEngine {
  return engines[kind];
}
