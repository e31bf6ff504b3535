import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEDULES } from '../helpers/cuda-shim.js';
import { Arena } from '../../gpu/cuda/arena.js';
import { CudaContext } from '../../gpu/cuda/device.js';
import { f32, i32, type PlaneRef, Program, ptr } from '../../gpu/cuda/program.js';
import { buildCudaShim } from '../../gpu/cuda/shim/build.js';
import { coldfilt, colfilter, colifilt, type Plane } from '../../gpu/dtcwt/lowlevel.js';
import { dtcwtFilters } from '../../gpu/dtcwt/filters.js';
import { c2q, type Highpass, q2c, transpose } from '../../gpu/dtcwt/quads.js';
import { downsample, writeVariants } from '../../gpu/resample.js';

// Each kernel of gpu/cuda/kernels on its own, compiled as C++ (the CPU shim), against the CPU
// reference function it replaces, on small planes with odd sizes and two frames per batch, on both
// of the shim's schedules.
let cuda: CudaContext;

const FRAMES = 2;
const bank = dtcwtFilters();

function noise(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return (s >>> 8) / 65536 - 128;
  });
}

/** Runs a one-step program on FRAMES frames: uploads `inputs` (all frames back to back), returns `outputs`. */
async function run(p: Program, inputs: Record<string, Uint8Array>, outputs: string[]): Promise<Uint8Array[]> {
  const { driver } = cuda;
  const arena = new Arena(driver, p, FRAMES, cuda.kernels);
  try {
    for (const [name, bytes] of Object.entries(inputs)) {
      const staging = driver.allocPinned(bytes.length);
      staging.bytes.set(bytes);
      driver.upload(arena.address(name), staging.address, bytes.length, 0);
      driver.synchronize(0); // the copy reads staging when it runs
      driver.freePinned(staging);
    }
    arena.run({ frames: FRAMES, pairs: 0, jobs: 0 }, 0);
    return outputs.map((name) => {
      const size = (p.buffers.get(name)?.bytes ?? 0) * FRAMES;
      const staging = driver.allocPinned(size);
      driver.download(staging.address, arena.address(name), size, 0);
      driver.synchronize(0);
      const copy = staging.bytes.slice();
      driver.freePinned(staging);
      return copy;
    });
  } finally {
    arena.free();
  }
}

const bytesOf = (a: Float32Array | Uint8Array | Int32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const floatsOf = (b: Uint8Array) => new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);

function expectClose(actual: Float32Array, expected: Float32Array): void {
  expect(actual.length).toBe(expected.length);
  const scale = Math.max(1, ...expected.map(Math.abs));
  let worst = 0;
  for (let i = 0; i < actual.length; i++)
    worst = Math.max(worst, Math.abs((actual[i] as number) - (expected[i] as number)));
  expect(worst / scale).toBeLessThan(1e-5);
}

/** Two frames of a rows x cols plane, the reference applied to each, along axis 0 or (by transposing) 1. */
async function compareFilter(
  rows: number,
  cols: number,
  axis: 0 | 1,
  emit: (p: Program, x: PlaneRef) => PlaneRef,
  reference: (x: Plane<Float32Array>) => Plane<Float32Array>,
) {
  const p = new Program();
  const x = p.plane('x', rows, cols);
  const y = emit(p, x);
  const data = noise(rows * cols * FRAMES, rows * 31 + cols);
  const [out] = await run(p, { [x.buffer]: bytesOf(data) }, [y.buffer]);
  for (let f = 0; f < FRAMES; f++) {
    const plane = { data: data.slice(f * rows * cols, (f + 1) * rows * cols), rows, cols };
    const ref = axis === 0 ? reference(plane) : transpose(reference(transpose(plane)));
    const n = ref.rows * ref.cols;
    expectClose(floatsOf(out as Uint8Array).slice(f * n, (f + 1) * n), ref.data);
  }
}

const tap = (name: keyof typeof bank.qshift | keyof typeof bank.biort) =>
  ({ ...bank.biort, ...bank.qshift })[name] as Float64Array;

function taps(p: Program, ...names: (keyof typeof bank.qshift | keyof typeof bank.biort)[]) {
  const values = names.map(tap);
  const all = new Float32Array(values.reduce((n, v) => n + v.length, 0));
  let at = 0;
  const offsets = values.map((v) => {
    all.set(v, at);
    at += v.length;
    return (at - v.length) * 4;
  });
  const buffer = p.buffer('taps', all.byteLength, true, bytesOf(all));
  return offsets.map((o, i) => ({ arg: ptr(buffer, o), length: (values[i] as Float64Array).length }));
}

const dot = (a: Float64Array, b: Float64Array) => a.reduce((s, v, i) => s + v * (b[i] as number), 0);

describe.each(SCHEDULES)('CUDA kernels against the CPU reference (CPU shim, %s)', (_, deferred) => {
  beforeAll(async () => {
    cuda = await CudaContext.open({ library: buildCudaShim({ deferred }) });
  });
  afterAll(() => cuda.close());

  it.each([0, 1] as const)('filter_odd along axis %i is colfilter', async (axis) => {
    await compareFilter(
      13,
      10,
      axis,
      (p, x) => {
        const [h] = taps(p, 'h1o');
        const y = p.plane('y', x.rows, x.cols);
        const args = [ptr(x.buffer), i32(x.rows), i32(x.cols), p.stride(x), i32(axis), h?.arg, i32(h?.length ?? 0)];
        p.launch('filter_odd', x.rows * x.cols, [...(args as never[]), ptr(y.buffer), p.stride(y), i32(0)]);
        return y;
      },
      (x) => colfilter(x, tap('h1o')),
    );
  });

  it.each([0, 1] as const)('filter_down along axis %i is coldfilt', async (axis) => {
    await compareFilter(
      12,
      16,
      axis,
      (p, x) => {
        const [ha, hb] = taps(p, 'h1b', 'h1a');
        const y = p.plane('y', axis === 0 ? x.rows / 2 : x.rows, axis === 0 ? x.cols : x.cols / 2);
        const aFirst = dot(tap('h1b'), tap('h1a')) > 0 ? 1 : 0;
        const args = [ptr(x.buffer), i32(x.rows), i32(x.cols), p.stride(x), i32(axis), ha?.arg, hb?.arg];
        const rest = [i32(ha?.length ?? 0), i32(aFirst), ptr(y.buffer), p.stride(y)];
        p.launch('filter_down', y.rows * y.cols, [...(args as never[]), ...rest]);
        return y;
      },
      (x) => coldfilt(x, tap('h1b'), tap('h1a')),
    );
  });

  it.each([0, 1] as const)('filter_up along axis %i is colifilt', async (axis) => {
    await compareFilter(
      6,
      10,
      axis,
      (p, x) => {
        const [ha, hb] = taps(p, 'g0b', 'g0a');
        const y = p.plane('y', axis === 0 ? x.rows * 2 : x.rows, axis === 0 ? x.cols : x.cols * 2);
        const aFirst = dot(tap('g0b'), tap('g0a')) > 0 ? 1 : 0;
        const args = [ptr(x.buffer), i32(x.rows), i32(x.cols), p.stride(x), i32(axis), ha?.arg, hb?.arg];
        const rest = [i32(ha?.length ?? 0), i32(aFirst), ptr(y.buffer), p.stride(y), i32(0)];
        p.launch('filter_up', y.rows * y.cols, [...(args as never[]), ...rest]);
        return y;
      },
      (x) => colifilt(x, tap('g0b'), tap('g0a')),
    );
  });

  it('copy_clamped extends edges and crops as cpu.ts does', async () => {
    const p = new Program();
    const x = p.plane('x', 5, 7);
    const grown = p.copyClamped(x, 7, 9, 1, 1);
    const cropped = p.copyClamped(grown, 5, 7, -1, -1);
    const data = noise(35 * FRAMES, 3);
    const [g, c] = await run(p, { [x.buffer]: bytesOf(data) }, [grown.buffer, cropped.buffer]);
    expect(floatsOf(c as Uint8Array)).toEqual(data);
    const first = floatsOf(g as Uint8Array);
    expect([first[0], first[1], first[9 + 1], first[62]]).toEqual([data[0], data[0], data[0], data[34]]);
  });

  it('q2c and c2q are quads.ts q2c and c2q', async () => {
    const rows = 3;
    const cols = 4;
    const p = new Program();
    const quad = p.plane('quad', rows * 2, cols * 2);
    const level = { re: p.buffer('re', rows * cols * 24), im: p.buffer('im', rows * cols * 24), rows, cols };
    const hpArgs = [ptr(level.re), ptr(level.im), i32(rows), i32(cols), i32(rows * cols * 6)];
    p.launch('q2c', rows * cols, [
      ptr(quad.buffer),
      i32(rows),
      i32(cols),
      p.stride(quad),
      ptr(level.re),
      ptr(level.im),
      i32(rows * cols * 6),
      i32(1),
      i32(4),
    ]);
    const back = p.plane('back', rows * 2, cols * 2);
    p.launch('c2q', rows * cols, [...hpArgs, i32(1), i32(4), ptr(back.buffer), p.stride(back)]);
    const data = noise(rows * cols * 4 * FRAMES, 9);
    const [re, b] = await run(p, { [quad.buffer]: bytesOf(data) }, [level.re, back.buffer]);
    const n = rows * cols * 4;
    const hp: Highpass<Float32Array> = { re: new Float32Array(n * 1.5), im: new Float32Array(n * 1.5), rows, cols };
    q2c({ data: data.slice(n, 2 * n), rows: rows * 2, cols: cols * 2 }, hp, 1, 4);
    expectClose(floatsOf(re as Uint8Array).slice(n * 1.5, n * 3), hp.re);
    expectClose(
      floatsOf(b as Uint8Array).slice(n, 2 * n),
      c2q(hp, 1, 4, { data: new Float32Array(1), rows: 1, cols: 1 }).data,
    );
  });

  it('reduce_box and write_variants are downsample and writeVariants', async () => {
    const [width, height, factor] = [37, 22, 4];
    const [rw, rh] = [Math.floor(width / factor), Math.floor(height / factor)];
    const p = new Program();
    const luma = p.buffer('luma', width * height);
    const small = p.plane('small', rh, rw);
    const table = p.buffer('table', 4 * FRAMES, true);
    const sums = p.buffer('sums', 8 * FRAMES, true);
    const [a, b] = [p.buffer('a', width * height), p.buffer('b', width * height)];
    p.launch('reduce_box', rw * rh, [
      ptr(luma),
      i32(width),
      i32(height),
      i32(width * height),
      i32(factor),
      ptr(small.buffer),
      i32(rw),
      i32(rh),
      p.stride(small),
    ]);
    const lumaArgs = [ptr(luma), i32(width), i32(height), i32(width * height), ptr(small.buffer), i32(rw), i32(rh)];
    const rest = [p.stride(small), ptr(table), ptr(sums), i32(0), f32(0), f32(0), f32(1), i32(factor), ptr(a), ptr(b)];
    p.launch('write_variants', width * height, [...lumaArgs, ...rest]);
    const pixels = Uint8Array.from({ length: width * height * FRAMES }, (_, i) => (i * 97) % 256);
    // source[f] = f: each frame's own reduced plane serves as its δ (a large change, clipped often)
    const [reduced, outA, outB] = await run(p, { [luma]: pixels, [table]: bytesOf(Int32Array.from([0, 1])) }, [
      small.buffer,
      a,
      b,
    ]);
    for (let f = 0; f < FRAMES; f++) {
      const frame = pixels.slice(f * width * height, (f + 1) * width * height);
      const expected = downsample(frame, width, height, factor);
      expectClose(floatsOf(reduced as Uint8Array).slice(f * rw * rh, (f + 1) * rw * rh), expected);
      const [ea, eb] = [new Uint8Array(width * height), new Uint8Array(width * height)];
      writeVariants(frame, expected, width, height, factor, { a: ea, b: eb });
      expect((outA as Uint8Array).slice(f * width * height, (f + 1) * width * height)).toEqual(ea);
      expect((outB as Uint8Array).slice(f * width * height, (f + 1) * width * height)).toEqual(eb);
    }
  });
});
