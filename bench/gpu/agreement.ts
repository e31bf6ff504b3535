/**
 * Whether the GPU marks as the CPU does, on one 1080p frame: the coefficients of the same transform,
 * the pixels of both variants, the PSNR of the mark, and the mark read back. The read-out is the
 * detector's core: the pattern's correlation with the change between A and B, weighted by the
 * original coefficients (A − B = 2·α·p·c on the marked levels), as z. A copy marked on the GPU is
 * read by the CPU's transform, and a copy marked on the CPU by the GPU's.
 */
import { randomBytes } from 'node:crypto';
import type { DtcwtBackend, Transform } from '../../gpu/backend.js';
import { downsample, reducedSize } from '../../gpu/resample.js';
import {
  DEFAULT_VIDEO_MARK,
  markFrame,
  patternLength,
  segmentGains,
  segmentPattern,
} from '../../src/watermark/video/mark.js';
import { psnr, texturedFrame } from './frames.js';

const params = DEFAULT_VIDEO_MARK;

/** Worst difference of any band, relative to that band's largest magnitude. */
function worstRelative(a: Transform, b: Transform): number {
  const pairs: [Float32Array, Float32Array][] = [[a.lowpass.data, b.lowpass.data]];
  a.highpasses.forEach((h, i) => {
    const e = b.highpasses[i] as Transform['highpasses'][number];
    pairs.push([h.re, e.re], [h.im, e.im]);
  });
  let worst = 0;
  for (const [x, y] of pairs) {
    let diff = 0;
    let size = 0;
    for (let i = 0; i < x.length; i++) {
      diff = Math.max(diff, Math.abs((x[i] as number) - (y[i] as number)));
      size = Math.max(size, Math.abs(y[i] as number));
    }
    if (size > 0) worst = Math.max(worst, diff / size);
  }
  return worst;
}

async function reducedTransform(backend: DtcwtBackend, luma: Uint8Array, width: number, height: number) {
  const r = reducedSize(width, height, params.scale);
  const small = downsample(luma, width, height, params.scale);
  return backend.forward(small, r.height, r.width, params.levels, undefined, Math.min(...params.markLevels));
}

/** z of the pattern in the change from B to A, read with `reader`'s transform. */
async function readZ(
  reader: DtcwtBackend,
  y: Uint8Array,
  a: Uint8Array,
  b: Uint8Array,
  w: number,
  h: number,
  p: Float32Array,
) {
  const [ty, ta, tb] = await Promise.all([y, a, b].map((f) => reducedTransform(reader, f, w, h)));
  let k = 0;
  let signal = 0;
  let energy = 0;
  for (const l of params.markLevels) {
    const [hy, ha, hb] = [ty, ta, tb].map((t) => (t as Transform).highpasses[l - 1]) as Transform['highpasses'];
    if (!hy || !ha || !hb) throw new Error(`no level ${l}`);
    for (let i = 0; i < hy.re.length; i++, k++) {
      const u =
        ((ha.re[i] as number) - (hb.re[i] as number)) * (hy.re[i] as number) +
        ((ha.im[i] as number) - (hb.im[i] as number)) * (hy.im[i] as number);
      signal += (p[k] as number) * u;
      energy += u * u;
    }
  }
  return signal / Math.sqrt(Math.max(energy, 1e-30));
}

function pixelDiff(a: Uint8Array, b: Uint8Array, n: number) {
  let max = 0;
  let count = 0;
  for (let i = 0; i < n; i++) {
    const d = Math.abs((a[i] as number) - (b[i] as number));
    if (d) count++;
    max = Math.max(max, d);
  }
  return { max, share: count / n };
}

export async function agreement(cuda: DtcwtBackend, cpu: DtcwtBackend, width: number, height: number) {
  const y = texturedFrame(width, height, 7);
  const full = Float32Array.from(y.subarray(0, width * height));
  const [fc, fg] = [
    await cpu.forward(full.slice(), height, width, 4),
    await cuda.forward(full.slice(), height, width, 4),
  ];
  const [ic, ig] = [await cpu.inverse(fc), await cuda.inverse(fg)];
  let inverseDiff = 0;
  for (let i = 0; i < ic.length; i++)
    inverseDiff = Math.max(inverseDiff, Math.abs((ic[i] as number) - (ig[i] as number)));
  const pattern = segmentPattern(randomBytes(32), 'bench-gpu', 0, patternLength(width, height, params));
  const gains = segmentGains(pattern, params);
  const [mc, mg] = [
    await markFrame(cpu, y.slice(), width, height, gains, 'both'),
    await markFrame(cuda, y.slice(), width, height, gains, 'both'),
  ];
  const n = width * height;
  const [ca, cb, ga, gb] = [mc.A, mc.B, mg.A, mg.B] as Uint8Array[];
  const zCpu = await readZ(cpu, y, ca as Uint8Array, cb as Uint8Array, width, height, pattern);
  const zGpuMarkedCpuRead = await readZ(cpu, y, ga as Uint8Array, gb as Uint8Array, width, height, pattern);
  const zCpuMarkedGpuRead = await readZ(cuda, y, ca as Uint8Array, cb as Uint8Array, width, height, pattern);
  return {
    forwardWorstRelative: worstRelative(fg, fc),
    inverseMaxAbs: inverseDiff,
    variantA: pixelDiff(ga as Uint8Array, ca as Uint8Array, n),
    variantB: pixelDiff(gb as Uint8Array, cb as Uint8Array, n),
    psnrCpu: psnr(y, ca as Uint8Array, n),
    psnrGpu: psnr(y, ga as Uint8Array, n),
    zCpu,
    zGpuMarkedCpuRead,
    zCpuMarkedGpuRead,
  };
}
