import type { DtcwtBackend } from '../../../gpu/backend.js';
import type { MediaInfo } from '../../media/probe.js';
import type { DetectJob } from '../segments.js';
import type { VideoMarkParams } from './mark.js';

// What a video detection is asked, shared by its stages (./detect-time.ts, ./detect-place.ts,
// ./detect-score.ts) and the file that runs them (./detect.ts), which re-exports it.

export type DetectStage = 'decode' | 'align' | 'score';

export interface VideoDetectOptions extends DetectJob {
  /**
   * `original` is a reference plane (./reference.ts), its thumbnails beside it where ingest wrote
   * them; otherwise both are made from it first
   */
  reference?: boolean;
  backend: DtcwtBackend;
  params?: VideoMarkParams;
  /** frames scored per segment, evenly spread over what the leak holds of it (default 10) */
  framesPerSegment?: number;
  /** also score each segment against this many patterns of keys never used (SegmentReading.nullZ) */
  nullPatterns?: number;
  /** where the working files go (a reference made from an original, the leak's proxies); the system's by default */
  tempDir?: string;
  /**
   * decode: leak samples (about every fourth frame) decoded of those expected; align: steps done of 2; score: frames
   * scored
   */
  onProgress?: (stage: DetectStage, done: number, total: number) => void;
}

export type VideoInfo = NonNullable<MediaInfo['video']> & { duration: number };
