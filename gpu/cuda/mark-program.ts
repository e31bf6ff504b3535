/**
 * The video mark's whole per-frame job (gpu/modulate.ts) as one program for a batch of frames of
 * one geometry: reduce the luma, transform, multiply the marked levels by their gains, invert the
 * change δ, hold its RMS, decide which frames of a run share a δ, and write variants A and B.
 *
 * A batch holds several jobs (runs of frames of one segment), possibly of different segments: the
 * integer table says which gain table each frame takes, where each job starts, and which pairs of
 * frames are compared for cuts. Layout of that table, in 32-bit integers:
 *   gainIndex[capacity] | source[capacity] | jobCount, jobs[3 · capacity] | pairs[2 · pairCapacity]
 * A job is (first frame, frames, first pair); its pairs (j, k), j < k, are listed k(k − 1)/2 + j on.
 */
import { dtcwtFilters } from '../dtcwt/filters.js';
import { CUT_MEAN_ABS, modulatedCount } from '../modulate.js';
import type { RmsRange } from '../modulate-job.js';
import { reducedSize } from '../resample.js';
import { f32, i32, Program, ptr } from './program.js';
import { forwardSteps, inverseSteps, type LevelShape, tapsOf } from './transform.js';

export interface MarkGeometry {
  width: number;
  height: number;
  scale: number;
  levels: number;
  modulated: readonly number[];
  rms?: RmsRange;
}

export interface MarkProgram {
  program: Program;
  /** frames, and pairs of frames compared for cuts, that one batch can hold */
  capacity: number;
  pairCapacity: number;
  /** gains per frame (the coefficients of the marked levels) */
  gainCount: number;
  buffers: { luma: string; a: string; b: string; gains: string; table: string };
  /** where each part of the integer table starts, in integers */
  table: { gainIndex: number; source: number; jobs: number; pairs: number; length: number };
}

/** Pairs one batch can compare: runs of up to 8 frames in a full batch. */
export const pairCapacityOf = (capacity: number) => capacity * 4;

/** The change δ of every frame of the batch: forward, gains, inverse. */
function deltaSteps(p: Program, g: MarkGeometry, gains: string, table: string, gainCount: number) {
  const r = reducedSize(g.width, g.height, g.scale);
  const taps = tapsOf(p, dtcwtFilters());
  const luma = p.buffer('luma', g.width * g.height);
  const small = p.plane('reduced', r.height, r.width);
  const reduceArgs = [ptr(luma), i32(g.width), i32(g.height), i32(g.width * g.height), i32(g.scale)];
  const reducedArgs = [ptr(small.buffer), i32(r.width), i32(r.height), p.stride(small)];
  p.launch('reduce_box', r.width * r.height, [...reduceArgs, ...reducedArgs]);
  const forward = forwardSteps(p, taps, small, g.levels, Math.min(...g.modulated), false);
  let offset = 0;
  for (const l of g.modulated) {
    const level = forward.levels[l - 1]?.level;
    if (!level) throw new RangeError(`modulate: level ${l} is not one of the ${g.levels} levels`);
    const count = level.rows * level.cols * 6;
    const args = [ptr(level.re), ptr(level.im), i32(count), i32(count), ptr(gains), ptr(table)];
    p.launch('apply_gains', count, [...args, i32(gainCount), i32(offset)]);
    offset += count;
  }
  const kept: LevelShape[] = forward.levels.map((s, i) => (g.modulated.includes(i + 1) ? s : { ...s, level: null }));
  const last = kept.at(-1) as LevelShape;
  const inverse = inverseSteps(p, taps, null, { rows: last.rows * 2, cols: last.cols * 2 }, kept, r.height, r.width);
  let delta = inverse.plane;
  if (!delta) {
    delta = p.plane('delta', r.height, r.width);
    p.zero(delta.buffer);
  }
  return { luma, small, delta, reduced: r };
}

export function markProgram(g: MarkGeometry, capacity: number): MarkProgram {
  const p = new Program();
  const gainCount = modulatedCount(g.width, g.height, g.scale, g.levels, g.modulated);
  const pairCapacity = pairCapacityOf(capacity);
  const layout = { gainIndex: 0, source: capacity, jobs: 2 * capacity, pairs: 5 * capacity + 1 };
  const tableLength = layout.pairs + 2 * pairCapacity;
  const gains = p.buffer('gains', capacity * gainCount * 4, true);
  const table = p.buffer('table', tableLength * 4, true);
  const sums = p.buffer('sums', capacity * 8, true);
  const diffs = p.buffer('diffs', pairCapacity * 8, true);
  p.zero(sums);
  p.zero(diffs);
  const { luma, small, delta, reduced } = deltaSteps(p, g, gains, table, gainCount);
  const count = reduced.width * reduced.height;
  if (g.rms) p.launch('sum_squares', count, [ptr(delta.buffer), i32(count), p.stride(delta), ptr(sums)], 'frames', 16);
  const pairArgs = [ptr(small.buffer), i32(count), p.stride(small), ptr(table, layout.pairs * 4), ptr(diffs)];
  p.launch('sum_abs_diff', count, pairArgs, 'pairs', 16);
  const source = ptr(table, layout.source * 4);
  const chooseArgs = [ptr(table, layout.jobs * 4), ptr(diffs), i32(count), f32(CUT_MEAN_ABS), source];
  p.launch('choose_sources', 0, chooseArgs, 'jobs');
  const a = p.buffer('a', g.width * g.height);
  const b = p.buffer('b', g.width * g.height);
  const rms = g.rms ?? { min: 0, max: 0, maxBoost: 1 };
  const lumaArgs = [ptr(luma), i32(g.width), i32(g.height), i32(g.width * g.height)];
  const deltaArgs = [ptr(delta.buffer), i32(reduced.width), i32(reduced.height), p.stride(delta), source, ptr(sums)];
  const rmsArgs = [i32(g.rms ? 1 : 0), f32(rms.min), f32(rms.max), f32(rms.maxBoost), i32(g.scale)];
  p.launch('write_variants', g.width * g.height, [...lumaArgs, ...deltaArgs, ...rmsArgs, ptr(a), ptr(b)]);
  return {
    program: p,
    capacity,
    pairCapacity,
    gainCount,
    buffers: { luma, a, b, gains, table },
    table: { ...layout, length: tableLength },
  };
}
