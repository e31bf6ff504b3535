import type { Transform } from '../../../gpu/backend.js';
import { segmentRandom } from '../keyed-random.js';
import { calibratedZ } from '../score.js';
import { markedCount, markedPlanes, type VideoMarkParams } from './mark.js';

/**
 * The non-blind score of one segment. For each frame, the marked coefficients of the original
 * (o) and of the suspect (s) give m_k += (|s_k| − |o_k|)·|o_k|: how much each coefficient grew,
 * weighted by where the mark was strong. (The measurement spike found this magnitude statistic
 * as good as the coherent one or better, and it ignores small phase shifts.) Over the segment,
 * S = Σ p_k·m_k is positive for variant A, negative for B, calibrated as ./score.ts says.
 * Patterns of other keys can be scored too as a check (their |z| should look standard normal).
 */
export class SegmentScore {
  private readonly m: Float64Array;
  private frameCount = 0;
  /**
   * Σ |o|² over the marked coefficients of every frame: what S grows by per unit of mark
   * (S ≈ α·κ·energy for a mark kept at κ)
   */
  private energy = 0;

  constructor(
    readonly count: number,
    private readonly params: VideoMarkParams,
  ) {
    this.m = new Float64Array(count);
  }

  get frames(): number {
    return this.frameCount;
  }

  addFrame(original: Transform, suspect: Transform): void {
    if (markedCount(original, this.params) !== this.count || markedCount(suspect, this.params) !== this.count) {
      throw new Error('original and suspect transforms must have the segment’s size');
    }
    const o = markedPlanes(original, this.params);
    const s = markedPlanes(suspect, this.params);
    let k = 0;
    for (let l = 0; l < o.length; l++) {
      const mo = magnitudes(o[l] as Transform['highpasses'][number]);
      const ms = magnitudes(s[l] as Transform['highpasses'][number]);
      const gain = subbandGains(mo, ms);
      for (let i = 0; i < mo.length; i++, k++) {
        const a = mo[i] as number;
        this.m[k] = (this.m[k] as number) + ((ms[i] as number) - (gain[i % 6] as number) * a) * a;
        this.energy += a * a;
      }
    }
    this.frameCount++;
  }

  /**
   * How far this segment's z reaches per unit of mark kept: energy / √(Σ m²). A single copy's
   * segments read z ≈ κ·α·reach with one κ for the whole leak (the share of the mark the attack
   * kept), so a segment that reads nothing where the others say it should read a lot lost its mark
   * to something else: opposite marks averaged together (src/domain/forensics/matching/readings.ts).
   */
  reach(): number {
    let spread = 0;
    for (const v of this.m) spread += v * v;
    return spread === 0 ? 0 : this.energy / Math.sqrt(spread);
  }

  /** z of a pattern: positive for A, negative for B, standard normal for a key that was not used. */
  z(pattern: Float32Array): number {
    return calibratedZ(pattern, this.m);
  }
}

/**
 * |c| of every coefficient of a level (sqrt of the squares: Math.hypot is several times slower, and its overflow care
 * is not needed here).
 */
function magnitudes(h: Transform['highpasses'][number]): Float64Array {
  const out = new Float64Array(h.re.length);
  for (let i = 0; i < out.length; i++) {
    const re = h.re[i] as number;
    const im = h.im[i] as number;
    out[i] = Math.sqrt(re * re + im * im);
  }
  return out;
}

/**
 * Per orientation of a level, the least-squares gain g with |s| ≈ g·|o|. A leak that was blurred,
 * rescaled or had its contrast changed grows or shrinks whole subbands; scoring |s| − g·|o|
 * keeps that content-wide change out of m, where it would only add noise. The mark's ±α·p
 * averages out of g (p is balanced), so g does not take the mark away.
 */
function subbandGains(mo: Float64Array, ms: Float64Array): Float64Array {
  const so = new Float64Array(6);
  const oo = new Float64Array(6);
  for (let i = 0; i < mo.length; i++) {
    const o = mo[i] as number;
    const b = i % 6;
    so[b] = (so[b] as number) + (ms[i] as number) * o;
    oo[b] = (oo[b] as number) + o * o;
  }
  return so.map((v, b) => ((oo[b] as number) > 0 ? v / (oo[b] as number) : 1));
}

/** Patterns of keys that were never used, for checking the calibration on real material. */
export function nullPatterns(key: Buffer, contentId: string, segment: number, count: number, n = 32): Float32Array[] {
  return Array.from({ length: n }, (_, i) => segmentRandom(key, contentId, segment, `video-null-${i}`).signs(count));
}
