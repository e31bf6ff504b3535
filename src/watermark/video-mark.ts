import type { DtcwtBackend, Transform } from '../../gpu/backend.js';
import { downsampleHalf, halfSize, upsampleDouble } from './resample.js';
import { segmentRandom } from './keyed-random.js';

/**
 * The video mark of one segment: a keyed ±1 pattern p over the DTCWT coefficients of chosen
 * levels of the half-resolution luma, applied as c' = c·(1 ± α·p), so that the change scales
 * with the local energy (texture masks it, flat areas get almost none). The transform is linear:
 * inverting the change alone gives δ, and A = Y + δ, B = Y − δ come from one analysis.
 *
 * Defaults from the measurement spike (issue 3 note): levels 3–4 of the half-resolution frame
 * (≈ levels 4–5 of the frame) survived CRF 35, 0.5× downscale and 1080p→480p with |z| ≥ 15 at
 * α = 0.13, where levels 2–3 needed more energy for less.
 */
export interface VideoMarkParams {
  levels: number;
  /** 1-based levels of the half-resolution transform that carry the mark */
  markLevels: readonly number[];
  alpha: number;
}

export const DEFAULT_VIDEO_MARK: VideoMarkParams = { levels: 4, markLevels: [3, 4], alpha: 0.13 };

export type Variant = 'A' | 'B';

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

/** The segment's pattern: one sign per marked coefficient, the same for every frame of the segment. */
export function segmentPattern(key: Buffer, contentId: string, segment: number, count: number): Float32Array {
  return segmentRandom(key, contentId, segment, 'video-mark').signs(count);
}

/** The half-resolution transform of a luma frame (shared by embedding and detection). */
export function analyse(backend: DtcwtBackend, luma: Uint8Array, width: number, height: number, params: VideoMarkParams) {
  const h = halfSize(width, height);
  return backend.forward(downsampleHalf(luma, width, height), h.height, h.width, params.levels);
}

/** δ at full size for variant A (B is −δ): the inverse of α·p·c on the marked levels, upsampled. */
export async function frameDelta(
  backend: DtcwtBackend,
  luma: Uint8Array,
  width: number,
  height: number,
  pattern: Float32Array,
  params: VideoMarkParams = DEFAULT_VIDEO_MARK,
): Promise<Float32Array> {
  const t = await analyse(backend, luma, width, height, params);
  if (markedCount(t, params) !== pattern.length) throw new Error('pattern length does not match the marked coefficients');
  t.lowpass.data.fill(0);
  const marked = new Set(params.markLevels);
  let k = 0;
  t.highpasses.forEach((hp, i) => {
    if (!marked.has(i + 1)) {
      hp.re.fill(0);
      hp.im.fill(0);
    }
  });
  for (const hp of markedPlanes(t, params)) {
    for (let i = 0; i < hp.re.length; i++, k++) {
      const s = params.alpha * (pattern[k] as number);
      hp.re[i] = (hp.re[i] as number) * s;
      hp.im[i] = (hp.im[i] as number) * s;
    }
  }
  return upsampleDouble(await backend.inverse(t), width, height);
}

/** Writes a variant: the luma plus (A) or minus (B) δ, rounded and clipped to 8 bits. */
export function applyDelta(luma: Uint8Array, delta: Float32Array, variant: Variant, out: Uint8Array = new Uint8Array(luma.length)): Uint8Array {
  const sign = variant === 'A' ? 1 : -1;
  for (let i = 0; i < luma.length; i++) {
    const v = Math.round((luma[i] as number) + sign * (delta[i] as number));
    out[i] = v < 0 ? 0 : v > 255 ? 255 : v;
  }
  return out;
}
