import type { DtcwtBackend, Transform } from '../../../gpu/backend.js';
import { type MarkedFrame, modulatedCount } from '../../../gpu/modulate.js';
import { downsample, reducedSize } from '../../../gpu/resample.js';
import { segmentRandom } from '../keyed-random.js';

/**
 * The video mark of one segment: a keyed ±1 pattern p over the DTCWT coefficients of chosen
 * levels of the reduced luma, applied as c' = c·(1 ± α·p), so that the change scales with the
 * local energy (texture masks it, flat areas get almost none). The transform is linear:
 * inverting the change alone gives δ, and A = Y + δ, B = Y − δ come from one analysis.
 *
 * Defaults from the measurement spike: the scales of 16–64 frame pixels (levels
 * 4–5 of the frame) survived CRF 35, 0.5× downscale and 1080p→480p with |z| ≥ 15 at α = 0.13,
 * where finer ones needed more energy for less. Those scales are levels 2–3 of the luma reduced
 * 4×, which costs a sixteenth of a full-size transform (a quarter of the half-size one first
 * used) and left the robustness table unchanged (docs/architecture.md, "The watermark").
 */
export interface VideoMarkParams {
  /** the luma is box-reduced by this factor before the transform, δ enlarged by it after */
  scale: number;
  levels: number;
  /** 1-based levels of the reduced transform that carry the mark */
  markLevels: readonly number[];
  alpha: number;
  /**
   * The PSNR of the mark alone that each frame's change is held within (dB): where texture would
   * let α·|c| grow past `strongest`, δ is scaled down, so every variant stays as close to its
   * source (and, after x264, to the unmarked encode) as the 45 dB asks; where content is
   * so smooth that the mark would stay fainter than `faintest`, δ is raised towards it (at most
   * `maxBoost` times), so that no segment is left too weak to read after compression.
   */
  psnrDb?: { strongest: number; faintest: number; maxBoost: number };
  /**
   * Consecutive frames of a segment that share one δ, computed on the first of them (a cut gets
   * its own: gpu/modulate.ts). 1 computes every frame's own.
   */
  deltaFrames?: number;
}

export const DEFAULT_VIDEO_MARK: VideoMarkParams = {
  scale: 4,
  levels: 3,
  markLevels: [2, 3],
  alpha: 0.13,
  psnrDb: { strongest: 52, faintest: 58.5, maxBoost: 4 },
  deltaFrames: 2,
};

/** The RMS change in grey levels that a PSNR of `db` allows. */
export const rmsForPsnr = (db: number) => 255 / 10 ** (db / 20);

/** The marked coefficients of a transform, in a fixed order: level, then plane position, then orientation. */
export function markedPlanes(t: Transform, params: VideoMarkParams) {
  return params.markLevels.map((l) => {
    const hp = t.highpasses[l - 1];
    if (!hp) throw new Error(`mark level ${l} is beyond the transform's ${t.highpasses.length} levels`);
    return hp;
  });
}

export function markedCount(t: Transform, params: VideoMarkParams): number {
  return markedPlanes(t, params).reduce((n, hp) => n + hp.re.length, 0);
}

/** How many coefficients a frame of this size marks: the length of every segment pattern. */
export function patternLength(width: number, height: number, params: VideoMarkParams = DEFAULT_VIDEO_MARK): number {
  return modulatedCount(width, height, params.scale, params.levels, params.markLevels);
}

/** The segment's pattern: one sign per marked coefficient, the same for every frame of the segment. */
export function segmentPattern(key: Buffer, contentId: string, segment: number, count: number): Float32Array {
  return segmentRandom(key, contentId, segment, 'video-mark').signs(count);
}

/**
 * The gains α·p of a segment, made once and used for each of its frames. In shared memory where
 * there is some: a worker pool then reads them in place instead of receiving a copy per frame.
 */
export function segmentGains(pattern: Float32Array, params: VideoMarkParams = DEFAULT_VIDEO_MARK): Float32Array {
  const gains =
    typeof SharedArrayBuffer === 'undefined'
      ? new Float32Array(pattern.length)
      : new Float32Array(new SharedArrayBuffer(pattern.byteLength));
  for (let i = 0; i < pattern.length; i++) gains[i] = params.alpha * (pattern[i] as number);
  return gains;
}

/**
 * The reduced transform of a luma frame (shared by embedding and detection). A float plane is one
 * already reduced (a detection reference and the leak brought to it): it is transformed as it is.
 */
export function analyse(
  backend: DtcwtBackend,
  luma: Uint8Array | Float32Array,
  width: number,
  height: number,
  params: VideoMarkParams,
) {
  if (luma instanceof Float32Array) {
    if (params.scale !== 1) throw new RangeError('analyse: a float plane must already be reduced (scale 1)');
    return backend.forward(luma.slice(), height, width, params.levels, undefined, Math.min(...params.markLevels));
  }
  const r = reducedSize(width, height, params.scale);
  // Only the marked levels' highpasses are read, so finer ones are not computed.
  return backend.forward(
    downsample(luma, width, height, params.scale),
    r.height,
    r.width,
    params.levels,
    undefined,
    Math.min(...params.markLevels),
  );
}

export type MarkedVariants = { A?: Uint8Array; B?: Uint8Array };

/**
 * Marks a run of consecutive frames of one segment (yuv420p, or bare luma planes: only the luma
 * changes) with the segment's gains: `plus` is variant A (c·(1 + α·p)), `minus` variant B. The
 * first frame's δ serves the run (gpu/modulate.ts says when a frame gets its own). Takes the
 * frames (a pool moves them to a worker); use the returned ones. B of `both` goes into
 * `minusInto` (one per frame) where given.
 */
export function markFrames(
  backend: DtcwtBackend,
  frames: readonly Uint8Array[],
  width: number,
  height: number,
  gains: Float32Array,
  want: 'A' | 'B' | 'both',
  params: VideoMarkParams = DEFAULT_VIDEO_MARK,
  minusInto?: Uint8Array[],
): Promise<MarkedVariants[]> {
  const [frame, ...next] = frames;
  if (!frame) return Promise.resolve([]);
  const variants = (r: MarkedFrame): MarkedVariants => ({
    ...(r.plus ? { A: r.plus } : {}),
    ...(r.minus ? { B: r.minus } : {}),
  });
  return backend
    .modulate({
      frame,
      ...(next.length > 0 ? { next } : {}),
      width,
      height,
      scale: params.scale,
      levels: params.levels,
      modulated: params.markLevels,
      gains,
      want: want === 'A' ? 'plus' : want === 'B' ? 'minus' : 'both',
      ...(minusInto && { minusInto }),
      ...(params.psnrDb && {
        rms: {
          max: rmsForPsnr(params.psnrDb.strongest),
          min: rmsForPsnr(params.psnrDb.faintest),
          maxBoost: params.psnrDb.maxBoost,
        },
      }),
    })
    .then((r) => [variants(r), ...(r.next ?? []).map(variants)]);
}

/** Marks one frame: markFrames with a run of one. */
export function markFrame(
  backend: DtcwtBackend,
  frame: Uint8Array,
  width: number,
  height: number,
  gains: Float32Array,
  want: 'A' | 'B' | 'both',
  params: VideoMarkParams = DEFAULT_VIDEO_MARK,
): Promise<MarkedVariants> {
  return markFrames(backend, [frame], width, height, gains, want, params).then((r) => r[0] as MarkedVariants);
}
