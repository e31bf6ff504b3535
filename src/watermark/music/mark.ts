import { istft, type Spectrogram, stft } from '../../../gpu/stft/stft.js';
import { segmentRandom } from '../keyed-random.js';
import { calibratedZ } from '../score.js';

/**
 * The music mark of one segment: STFT magnitudes in the band a lossy codec keeps are scaled by
 * (1 ± α·p), with p a keyed ±1 pattern that is constant over tiles of several frames × several
 * bins. Tiles, not single bins, because overlapping frames spread a per-bin change over its
 * neighbours on re-analysis (test/unit/stft.test.ts); a tile keeps most of its own change and
 * tolerates small misalignments. As for video, the change alone is resynthesised: δ, then
 * A = x + δ and B = x − δ from one analysis.
 */
export interface MusicMarkParams {
  frameSize: number;
  hop: number;
  /** the band that MP3 128 kb/s, AAC 64 kb/s and resampling to 22.05 kHz all keep */
  lowHz: number;
  highHz: number;
  tileFrames: number;
  tileBins: number;
  alpha: number;
}

export const DEFAULT_MUSIC_MARK: MusicMarkParams = {
  frameSize: 2048,
  hop: 512,
  lowHz: 500,
  highHz: 5000,
  tileFrames: 8,
  tileBins: 4,
  alpha: 0.04,
};

export interface TileLayout {
  firstBin: number;
  lastBin: number;
  binTiles: number;
  timeTiles: number;
  count: number;
}

export function tileLayout(frames: number, sampleRate: number, p: MusicMarkParams = DEFAULT_MUSIC_MARK): TileLayout {
  const hzPerBin = sampleRate / p.frameSize;
  const firstBin = Math.max(1, Math.ceil(p.lowHz / hzPerBin));
  const lastBin = Math.min(p.frameSize / 2 - 1, Math.floor(p.highHz / hzPerBin));
  const binTiles = Math.floor((lastBin - firstBin + 1) / p.tileBins);
  const timeTiles = Math.ceil(frames / p.tileFrames);
  return { firstBin, lastBin: firstBin + binTiles * p.tileBins - 1, binTiles, timeTiles, count: binTiles * timeTiles };
}

/** The tile of (frame t, bin k), or -1 outside the marked band. */
function tileOf(layout: TileLayout, p: MusicMarkParams, t: number, k: number): number {
  if (k < layout.firstBin || k > layout.lastBin) return -1;
  return Math.floor(t / p.tileFrames) * layout.binTiles + Math.floor((k - layout.firstBin) / p.tileBins);
}

export function musicPattern(key: Buffer, contentId: string, segment: number, count: number): Float32Array {
  return segmentRandom(key, contentId, segment, 'music-mark').signs(count);
}

/** δ for variant A of a mono segment (B is −δ). */
export function musicDelta(
  samples: Float32Array,
  sampleRate: number,
  pattern: Float32Array,
  p: MusicMarkParams = DEFAULT_MUSIC_MARK,
): Float32Array {
  const spec = stft(samples, p);
  const layout = tileLayout(spec.frames, sampleRate, p);
  if (pattern.length !== layout.count) throw new Error('pattern length does not match the segment’s tiles');
  const change: Spectrogram = { ...spec, re: new Float64Array(spec.re.length), im: new Float64Array(spec.im.length) };
  for (let t = 0; t < spec.frames; t++) {
    for (let k = layout.firstBin; k <= layout.lastBin; k++) {
      const s = p.alpha * (pattern[tileOf(layout, p, t, k)] as number);
      const i = t * spec.bins + k;
      change.re[i] = (spec.re[i] as number) * s;
      change.im[i] = (spec.im[i] as number) * s;
    }
  }
  return Float32Array.from(istft(change));
}

/**
 * The non-blind score of a music segment, as for video: per tile, m += (|S| − |O|)·|O| over its
 * frames and bins; z is exactly calibrated under the null (./score.ts). The suspect must
 * already be aligned to the original (same rate, same start).
 */
export function musicScore(
  original: Float32Array,
  suspect: Float32Array,
  sampleRate: number,
  p: MusicMarkParams = DEFAULT_MUSIC_MARK,
): { tiles: Float64Array; z(pattern: Float32Array): number } {
  const length = Math.min(original.length, suspect.length);
  const o = stft(original.subarray(0, length), p);
  const s = stft(suspect.subarray(0, length), p);
  const layout = tileLayout(o.frames, sampleRate, p);
  const tiles = new Float64Array(layout.count);
  for (let t = 0; t < o.frames; t++) {
    for (let k = layout.firstBin; k <= layout.lastBin; k++) {
      const i = t * o.bins + k;
      const mo = Math.hypot(o.re[i] as number, o.im[i] as number);
      const ms = Math.hypot(s.re[i] as number, s.im[i] as number);
      const tile = tileOf(layout, p, t, k);
      tiles[tile] = (tiles[tile] as number) + (ms - mo) * mo;
    }
  }
  return {
    tiles,
    z: (pattern) => calibratedZ(pattern, tiles),
  };
}
