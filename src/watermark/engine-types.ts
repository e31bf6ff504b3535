import type { DtcwtBackend } from '../../gpu/backend.js';
import type { MediaBinaries } from '../media/binaries.js';
import type { MediaInfo } from '../media/probe.js';
import type { VideoOutput } from '../media/video-frames.js';

// The shapes the engine hands to its video and music halves (./engine.ts re-exports them), kept
// apart so that the halves import no file that imports them.

/** Hands out the DTCWT backend that video needs, when it needs it; the caller owns and closes it. */
export type BackendSource = () => Promise<DtcwtBackend>;

export interface VariantsRequest {
  bins: MediaBinaries;
  key: Buffer;
  contentId: string;
  input: string;
  /** video: the input's probe, where the caller has one (ingest probed it first), so it is not probed twice */
  info?: MediaInfo;
  /** where the detection reference is written, under the kind's own name (referenceFile) */
  referenceDir: string;
  /** how long each segment is (seconds): each one's pattern covers that much of the film */
  segmentSeconds: number;
  /** video: more outputs of the one decode (the catalog's thumbnail and preview) */
  stills?: readonly VideoOutput[];
  backend?: BackendSource;
  signal?: AbortSignal;
}

/** One frame (video) or segment (music) as variants A and B, raw, and the progress once it is written. */
export interface VariantPiece {
  a: Uint8Array;
  b: Uint8Array;
  done: number;
  total: number;
  /** once both are written: their memory serves later pieces */
  release?: () => void;
}

/** Variants A and B of a whole file, from one decode, for an encoder per variant to package. */
export interface MarkedVariants {
  /** ffmpeg input options that read one variant's raw pieces from stdin (`-i pipe:0` included) */
  rawInput: string[];
  /** A and B of every piece, in order; the consumer's pace holds the decoder back */
  pieces(): AsyncGenerator<VariantPiece>;
  /** what is left once both variants are written (music writes its detection reference here) */
  finish(): Promise<void>;
}
