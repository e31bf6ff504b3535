/**
 * python dtcwt's colfilter, coldfilt and colifilt (gpu/dtcwt/lowlevel.ts) as tensor ops, applied
 * along axis 1 (rows) or axis 2 (columns) of an NHWC stack [frames, rows, cols, signals].
 *
 * Every one of the three is a polyphase filter: output sample P*i + p is a short correlation of
 * the symmetrically extended input read with a fixed step from a phase-specific start,
 *   y[P*i + p] = sum_l w_p[l] * x[refl(a*i + b_p + c*l)].
 * So each phase becomes one gather (the reflect indices, computed here in JS, which is how the
 * python `xe` extension is reproduced exactly) and all phases one depthwise conv2d with stride a/c,
 * whose outputs are interleaved back. The index algebra for b_p and w_p is derived from the loops
 * in lowlevel.ts, which stay the reference.
 */
import type * as Tf from '@tensorflow/tfjs';
import { reflectIndex } from '../dtcwt/lowlevel.js';

export type TfModule = typeof Tf;
type Filter = ArrayLike<number>;

/** One column operation for one filter (pair): its phases, their gathers and taps. */
export interface ColumnPlan {
  /** Output samples per input sample block: y has `outLength(n)` samples for n inputs. */
  outLength: (n: number) => number;
  /** Step of the gathered input between consecutive outputs of one phase (the conv stride). */
  stride: number;
  /** Step between taps in the extended input (1 for colfilter, 2 for the q-shift ops). */
  step: number;
  /** Per output phase: first extended-input index it reads, and its taps in correlation order. */
  phases: { base: number; taps: number[] }[];
}

const tapsOf = (h: Filter, pick: (l: number) => number, count: number): number[] =>
  Array.from({ length: count }, (_, l) => h[pick(l)] as number);

function sumProducts(a: Filter, b: Filter): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

/** colfilter(x, h): y[i] = sum_l h[m-1-l] x[refl(i + l - m2)] — one phase, stride 1. */
export function colfilterPlan(h: Filter): ColumnPlan {
  const m = h.length;
  const m2 = Math.trunc(m / 2);
  return {
    outLength: (n) => n + 2 * m2 - m + 1,
    stride: 1,
    step: 1,
    phases: [{ base: -m2, taps: tapsOf(h, (l) => m - 1 - l, m) }],
  };
}

/**
 * coldfilt(x, ha, hb): tree a reads x[refl(4i + 2 - m + 2l)] with reversed ha, tree b one sample
 * later with reversed hb; the sign of sum(ha * hb) decides which tree lands on even outputs.
 */
export function coldfiltPlan(ha: Filter, hb: Filter): ColumnPlan {
  const m = ha.length;
  const a = { base: 2 - m, taps: tapsOf(ha, (l) => m - 1 - l, m) };
  const b = { base: 3 - m, taps: tapsOf(hb, (l) => m - 1 - l, m) };
  return {
    outLength: (n) => {
      if (n % 4 !== 0) throw new RangeError('coldfilt: number of rows must be a multiple of 4');
      return n / 2;
    },
    stride: 2,
    step: 2,
    phases: sumProducts(ha, hb) > 0 ? [a, b] : [b, a],
  };
}

/**
 * colifilt(x, ha, hb): four output phases, each a half-length filter (odd or even taps of ha or
 * hb) over every other input sample; which taps and which start depend on whether m/2 is even
 * (python's 'd'/'b' sample alignment) and on the sign of sum(ha * hb).
 */
export function colifiltPlan(ha: Filter, hb: Filter): ColumnPlan {
  const m = ha.length;
  const m2 = m / 2;
  const aFirst = sumProducts(ha, hb) > 0;
  const dA = aFirst ? 0 : -1; // ta = t + dA
  const dB = aFirst ? -1 : 0; // tb = t + dB
  const odd = (h: Filter) => tapsOf(h, (l) => m - 1 - 2 * l, m2);
  const even = (h: Filter) => tapsOf(h, (l) => m - 2 - 2 * l, m2);
  const phases =
    m2 % 2 === 0
      ? [
          { base: 1 - m2 + dB, taps: odd(ha) },
          { base: 1 - m2 + dA, taps: odd(hb) },
          { base: 3 - m2 + dB, taps: even(ha) },
          { base: 3 - m2 + dA, taps: even(hb) },
        ]
      : [
          { base: 2 - m2 + dB, taps: even(ha) },
          { base: 2 - m2 + dA, taps: even(hb) },
          { base: 2 - m2 + dB, taps: odd(ha) },
          { base: 2 - m2 + dA, taps: odd(hb) },
        ];
  return {
    outLength: (n) => {
      if (n % 2 !== 0) throw new RangeError('colifilt: number of rows must be even');
      return 2 * n;
    },
    stride: 1,
    step: 2,
    phases,
  };
}

/**
 * Edge handling of the input before the filter's own reflection: the transform repeats edge
 * samples (odd sizes, the divisible-by-4 padding), which folds into the gather indices for free.
 * `before` extra samples at the start and `after` at the end, each a copy of the nearest one.
 */
export interface EdgePad {
  before: number;
  after: number;
}

/**
 * Applies `plan` along `axis` (1 = rows, 2 = columns) of x [N, rows, cols, S], the same filter on
 * every signal channel. Must run inside tf.tidy: it leaves intermediates to the caller's scope.
 */
export function filterAxis(
  tf: TfModule,
  x: Tf.Tensor4D,
  axis: 1 | 2,
  plan: ColumnPlan,
  pad: EdgePad = { before: 0, after: 0 },
): Tf.Tensor4D {
  const [frames, rows, cols, signals] = x.shape;
  const real = axis === 1 ? rows : cols;
  const n = real + pad.before + pad.after;
  const outLength = plan.outLength(n);
  const phaseCount = plan.phases.length;
  const perPhase = outLength / phaseCount;
  const taps = plan.phases[0]?.taps.length ?? 0;
  const gathered = (perPhase - 1) * plan.stride + taps;
  const source = (j: number) => Math.min(Math.max(reflectIndex(j, n) - pad.before, 0), real - 1);

  // Channels of the gathered stack are phase-major (p * S + s), as depthwiseConv2d expects them.
  const inputs = plan.phases.map(({ base }) => {
    const index = Int32Array.from({ length: gathered }, (_, s) => source(base + plan.step * s));
    return tf.gather(x, tf.tensor1d(index, 'int32'), axis);
  });
  const stacked = phaseCount === 1 ? (inputs[0] as Tf.Tensor4D) : tf.concat(inputs, 3);

  const weights = new Float32Array(taps * phaseCount * signals);
  plan.phases.forEach((phase, p) => {
    for (let l = 0; l < taps; l++)
      weights.fill(phase.taps[l] as number, (l * phaseCount + p) * signals, (l * phaseCount + p + 1) * signals);
  });
  const kernelShape: [number, number, number, number] =
    axis === 1 ? [taps, 1, phaseCount * signals, 1] : [1, taps, phaseCount * signals, 1];
  const strides: [number, number] = axis === 1 ? [plan.stride, 1] : [1, plan.stride];
  const y = tf.depthwiseConv2d(stacked, tf.tensor4d(weights, kernelShape), strides, 'valid');
  if (phaseCount === 1) return y;

  // Interleave the phases: output sample perPhase-index i, phase p goes to P*i + p.
  if (axis === 2) return y.reshape([frames, rows, outLength, signals]);
  return y
    .reshape([frames, perPhase, cols, phaseCount, signals])
    .transpose([0, 1, 3, 2, 4])
    .reshape([frames, outLength, cols, signals]);
}
