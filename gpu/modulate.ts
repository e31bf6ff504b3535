/**
 * The one per-frame kernel of video marking, as a single job so that a backend can run all of it
 * where its transform runs (the CPU pool: in a worker, next to the transform, so that the main
 * thread only moves frames between ffmpeg processes).
 *
 * The luma is box-reduced by `scale`, transformed, every coefficient of the modulated levels is
 * multiplied by its gain and everything else (lowpass, other levels) dropped; the inverse of that
 * is the change δ. Because the transform is linear, Y + δ is the frame whose modulated
 * coefficients became c·(1 + gain), and Y − δ the one where they became c·(1 − gain): both
 * variants come from one analysis. δ is enlarged while it is added (gpu/resample.ts).
 *
 * A job may carry the frames that follow its first one (`next`): they take the first frame's δ.
 * δ lives at scales of 16–64 frame pixels, which move little from one frame to the next, so one
 * analysis serves a run of frames and the transform work of marking shrinks by the run's length;
 * the mark also stays still over the run instead of changing every frame. A frame whose reduced
 * luma differs from the δ's source by more than CUT_MEAN_ABS (a cut, a flash) gets its own δ,
 * so no frame carries the change computed for another scene.
 */
import type { DtcwtBackend, Transform } from './backend.js';
import type { MarkedFrame, ModulateJob, ModulateResult, RmsRange } from './modulate-job.js';
import { downsample, reducedSize, writeVariants } from './resample.js';
import { type MarkPartTimes, noMarkTime, type ThreadClock } from './thread-cpu.js';

export type { MarkedFrame, ModulateJob, ModulateResult, RmsRange } from './modulate-job.js';

/**
 * Mean absolute difference (grey levels, on the reduced luma) above which a frame is taken for a
 * new shot and gets its own δ. Motion within a shot stays well under it (a pan of a few pixels per
 * frame moves a box-averaged plane by a few levels); a cut or a flash changes most of the frame by
 * tens of levels.
 */
export const CUT_MEAN_ABS = 12;

/** How many gains a frame of this size takes: the coefficients of the modulated levels. */
export function modulatedCount(
  width: number,
  height: number,
  scale: number,
  levels: number,
  modulated: readonly number[],
): number {
  let { width: cols, height: rows } = reducedSize(width, height, scale);
  // Sizes as forward2d makes them: odd sizes are extended once, level 1 keeps the size, and every
  // later level halves a size first extended to a multiple of 4.
  rows += rows % 2;
  cols += cols % 2;
  let count = 0;
  for (let level = 1; level <= levels; level++) {
    if (level > 1) {
      rows = (rows + (rows % 4 ? 2 : 0)) / 2;
      cols = (cols + (cols % 4 ? 2 : 0)) / 2;
    }
    if (modulated.includes(level)) count += (rows / 2) * (cols / 2) * 6;
  }
  return count;
}

/** The checks every backend makes of a job before any work (the CUDA backend too, before batching). */
export function checkJob(job: ModulateJob): void {
  const { width, height, levels, modulated } = job;
  for (const f of [job.frame, ...(job.next ?? [])])
    if (f.length < width * height) throw new RangeError('modulate: the frame is smaller than its luma plane');
  for (const l of modulated)
    if (!Number.isInteger(l) || l < 1 || l > levels)
      throw new RangeError(`modulate: level ${l} is not one of the ${levels} levels`);
  if (new Set(modulated).size !== modulated.length) throw new RangeError('modulate: a level is listed twice');
}

/** Charges the thread's CPU time since the last call to a part of the job (does nothing without a clock). */
type Lap = (part: keyof MarkPartTimes) => void;

function partTimer(clock: ThreadClock | undefined): { lap: Lap; times?: MarkPartTimes } {
  if (!clock) return { lap: () => undefined };
  const times = noMarkTime();
  let last = clock.seconds();
  const lap: Lap = (part) => {
    const now = clock.seconds();
    times[part] += now - last;
    last = now;
  };
  return { lap, times };
}

/** The change δ at the reduced size (the inverse of gain·c on the modulated levels) of a reduced luma. */
async function modulationDelta(
  backend: Pick<DtcwtBackend, 'forward' | 'inverse'>,
  small: Float32Array,
  job: ModulateJob,
  lap: Lap,
): Promise<Float32Array> {
  const { width, height, scale, levels, modulated, gains } = job;
  const r = reducedSize(width, height, scale);
  const t: Transform = await backend.forward(small, r.height, r.width, levels, undefined, Math.min(...modulated));
  lap('forward');
  t.lowpass.data.fill(0);
  let k = 0;
  t.highpasses.forEach((hp, i) => {
    if (!modulated.includes(i + 1)) {
      hp.re.fill(0);
      hp.im.fill(0);
    }
  });
  for (const l of modulated) {
    const hp = t.highpasses[l - 1] as Transform['highpasses'][number];
    if (k + hp.re.length > gains.length) break;
    for (let i = 0; i < hp.re.length; i++, k++) {
      const g = gains[k] as number;
      hp.re[i] = (hp.re[i] as number) * g;
      hp.im[i] = (hp.im[i] as number) * g;
    }
  }
  if (k !== gains.length)
    throw new RangeError(
      `modulate: ${gains.length} gains for ${modulatedCount(width, height, scale, levels, modulated)} coefficients`,
    );
  lap('modulate');
  const delta = await backend.inverse(t);
  lap('inverse');
  if (job.rms) clampRms(delta, job.rms);
  lap('modulate');
  return delta;
}

/**
 * Scales δ so that its root-mean-square lies in [min, max] (a flat frame, δ = 0, stays 0; the
 * boost stops at maxBoost). The enlarged δ (bilinear) is smoother than the reduced one, so its
 * own RMS at full size stays at or below the max.
 */
export function clampRms(delta: Float32Array, range: RmsRange): void {
  let sum = 0;
  for (let i = 0; i < delta.length; i++) sum += (delta[i] as number) ** 2;
  const rms = Math.sqrt(sum / Math.max(1, delta.length));
  if (!(rms > 0)) return;
  const f = rms > range.max ? range.max / rms : rms < range.min ? Math.min(range.maxBoost, range.min / rms) : 1;
  if (f === 1) return;
  for (let i = 0; i < delta.length; i++) delta[i] = (delta[i] as number) * f;
}

function meanAbsDiff(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs((a[i] as number) - (b[i] as number));
  return sum / Math.max(1, a.length);
}

/**
 * The wanted variants of one frame, from a δ. Minus of `both` goes into `into` when given, else
 * into a copy; either way the chroma (and anything after the luma) comes along.
 */
function writeWanted(frame: Uint8Array, delta: Float32Array, job: ModulateJob, into?: Uint8Array): MarkedFrame {
  const { width, height, scale } = job;
  if (job.want === 'plus') {
    writeVariants(frame, delta, width, height, scale, { a: frame });
    return { plus: frame };
  }
  if (job.want === 'minus') {
    writeVariants(frame, delta, width, height, scale, { b: frame });
    return { minus: frame };
  }
  const luma = width * height;
  let minus: Uint8Array;
  if (into && into.length === frame.length) {
    minus = into;
    minus.set(frame.subarray(luma), luma);
  } else minus = frame.slice();
  writeVariants(frame, delta, width, height, scale, { a: frame, b: minus });
  return { plus: frame, minus };
}

/**
 * The whole job on the given transform: δ of the first frame (and of any cut), the wanted variants
 * of every frame. With a clock, the result says how the thread's CPU time went (`times`).
 */
export async function modulateFrame(
  backend: Pick<DtcwtBackend, 'forward' | 'inverse'>,
  job: ModulateJob,
  clock?: ThreadClock,
): Promise<ModulateResult> {
  const { lap, times } = partTimer(clock);
  checkJob(job);
  const { width, height, scale } = job;
  let source = downsample(job.frame, width, height, scale);
  lap('reduce');
  let delta = await modulationDelta(backend, source, job, lap);
  const first = writeWanted(job.frame, delta, job, job.minusInto?.[0]);
  lap('write');
  const next: MarkedFrame[] = [];
  for (const [k, frame] of (job.next ?? []).entries()) {
    const small = downsample(frame, width, height, scale);
    const cut = meanAbsDiff(small, source) > CUT_MEAN_ABS;
    lap('reduce');
    if (cut) {
      source = small;
      delta = await modulationDelta(backend, small, job, lap);
    }
    next.push(writeWanted(frame, delta, job, job.minusInto?.[k + 1]));
    lap('write');
  }
  return { ...first, ...(job.next?.length ? { next } : {}), ...(times && { times }) };
}
