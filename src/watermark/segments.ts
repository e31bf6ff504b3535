import type { MediaBinaries } from '../media/binaries.js';
import { DrmError } from '../errors.js';
import { flippedAt, positionOf, type SegmentRule, servedBit } from './segment-rule.js';

// The watermark carries one bit per HLS segment, of the length the content was packaged in
// (the rule's segmentSeconds: 10 s, the spec's target duration, unless ingest chose shorter).

/** A viewer's permanent id has 40 bits; each segment carries one of them (./segment-rule.ts says which). */
export const ID_BITS = 40;

/** A binaryId or a --bits argument: exactly 40 characters of 0 and 1. */
export function parseBits(bits: string): string {
  if (!/^[01]{40}$/.test(bits)) {
    throw new DrmError(
      'BAD_REQUEST',
      `bits must be exactly ${ID_BITS} characters of 0 and 1 (got ${JSON.stringify(bits.slice(0, 60))})`,
    );
  }
  return bits;
}

/** The two marked copies of every segment. */
export type Variant = 'A' | 'B';

/** The variant a viewer with id `bits` is served on a segment, under the content's rule. */
export function variantFor(bits: string, segment: number, rule: SegmentRule): Variant {
  return servedBit(rule, bits, segment) === 1 ? 'B' : 'A';
}

/** The segment a time (seconds from the start of the original) falls in, for segments of `segmentSeconds`. */
export function segmentAt(seconds: number, segmentSeconds: number): number {
  return Math.floor(seconds / segmentSeconds + 1e-9);
}

/** What the detector says about one segment of the original. */
export interface SegmentReading {
  /** segment index in the original */
  index: number;
  /** calibrated score: positive for variant A (bit 0), negative for B (bit 1); |z| < 4 undecided */
  z: number;
  bit: '0' | '1' | '?';
  /** seconds of the leak that fell in this segment */
  coverage: number;
  /** the segment's z under patterns of keys that were never used, when asked for (calibration checks, benchmarks) */
  nullZ?: number[];
  /**
   * how far z reaches per unit of mark kept (video; ./video/score.ts): what |z| a single copy should read here, up to
   * one factor for the whole leak
   */
  reach?: number;
  /** the position of the id's bit this segment carries under the content's rule (absent: index mod 40, fixed) */
  position?: number;
  /** whether the content's rule serves that bit flipped here (bit 0 as B) */
  flipped?: boolean;
}

/** A reading with the rule's position and flip written on it, so that a stored case shows what each segment carried. */
export function underRule(reading: SegmentReading, rule: SegmentRule): SegmentReading {
  return { ...reading, position: positionOf(rule, reading.index), flipped: flippedAt(rule, reading.index) };
}

/** The id position a stored reading carries (cases stored before rules were keyed: index mod 40). */
export const positionOfReading = (s: SegmentReading): number => s.position ?? s.index % ID_BITS;

/** The variant bit (0 for A) a viewer with id `bits` was served on a stored reading's segment. */
export function servedOnReading(s: SegmentReading, bits: string): '0' | '1' | undefined {
  const bit = bits[positionOfReading(s)];
  if (bit !== '0' && bit !== '1') return undefined;
  return (bit === '1') !== Boolean(s.flipped) ? '1' : '0';
}

export interface Detection {
  segments: SegmentReading[];
  /** the 40-bit read-out of the id under the content's rule, '?' where no position is decided */
  bits: string;
  /** how the leak was aligned to the original */
  alignment: Record<string, number | string | boolean>;
}

/**
 * Folds per-segment readings into the 40-bit read-out of the id, under the content's rule.
 * Several segments can carry the same bit (s and s + 40); their z add up with the sign each one
 * votes for (a flipped segment's z counted the other way), calibrated by √n, so the bit comes from
 * all the evidence and a disagreement leaves it undecided rather than picking one.
 */
export function readOut(segments: readonly SegmentReading[], rule: SegmentRule, threshold = 4): string {
  const sum = new Float64Array(ID_BITS);
  const n = new Uint32Array(ID_BITS);
  for (const s of segments) {
    const b = positionOf(rule, s.index);
    sum[b] = (sum[b] as number) + (flippedAt(rule, s.index) ? -s.z : s.z);
    n[b] = (n[b] as number) + 1;
  }
  let out = '';
  for (let b = 0; b < ID_BITS; b++) {
    const count = n[b] as number;
    const z = count === 0 ? 0 : (sum[b] as number) / Math.sqrt(count);
    out += z >= threshold ? '0' : z <= -threshold ? '1' : '?';
  }
  return out;
}

/** What every detector is told: the leak, the original it was taken from, and the key that made the patterns. */
export interface DetectJob {
  bins: MediaBinaries;
  key: Buffer;
  contentId: string;
  leak: string;
  /** the unmarked original, or the detection reference ingest kept */
  original: string;
  /** the content's rule: which bit of an id each segment carries (for the read-out) */
  rule: SegmentRule;
  signal?: AbortSignal;
}

/** What every embedder is told: the file, the viewer's bits, and the key that makes the patterns. */
export interface EmbedJob {
  bins: MediaBinaries;
  key: Buffer;
  contentId: string;
  /** any file ffmpeg reads */
  input: string;
  /** the marked copy to write */
  output: string;
  /** the viewer's id, 40 characters of 0 and 1: `rule` says which bit each segment carries and as which variant */
  bits: string;
  rule: SegmentRule;
  signal?: AbortSignal;
}
