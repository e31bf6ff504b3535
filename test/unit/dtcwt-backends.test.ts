import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DtcwtBackend, Transform } from '../../gpu/backend.js';
import { createCpuDirectBackend } from '../../gpu/cpu-direct.js';
import { CpuPoolBackend } from '../../gpu/cpu-pool.js';
import { forward2d, inverse2d } from '../../gpu/dtcwt/cpu.js';
import { type BiortName, dtcwtFilters } from '../../gpu/dtcwt/filters.js';
import { createDtcwtBackend } from '../../gpu/index.js';
import { modulateFrame, modulatedCount } from '../../gpu/modulate.js';
import { CudaBackend } from '../../gpu/cuda/backend.js';
import { buildCudaShim } from '../../gpu/cuda/shim/build.js';
import {
  dtcwtCases,
  type FixtureCase,
  loadArray,
  maxAbs,
  maxAbsDiff,
  noise as noise64,
} from '../helpers/dtcwt-fixtures.js';

// One suite for every backend present. `exact` backends run the reference float32 code (same
// V8, same summation order) and must match it bit for bit; the CUDA kernels sum in float32 in their
// own order, so they are held to 1e-4 relative instead (float32 rounding over a few dozen taps is
// ~1e-6). Without a GPU the CUDA backend runs its kernels on the CPU shim (gpu/cuda/shim): the same
// kernel sources and the same host code, one thread after another.
const BACKENDS: {
  name: string;
  exact: boolean;
  batch?: [number, number];
  create: () => DtcwtBackend | Promise<DtcwtBackend>;
}[] = [
  { name: 'cpu-direct', exact: true, create: () => createCpuDirectBackend() },
  // 3 workers for 16 jobs: exercises both parallelism and the queue whatever the machine.
  { name: 'cpu-pool', exact: true, create: () => new CpuPoolBackend({ workers: 3 }) },
  { name: 'cuda (CPU shim)', exact: false, create: () => CudaBackend.open({ library: buildCudaShim(), workers: 1 }) },
  // streams that run their work only when waited for, as a GPU's do (gpu/cuda/shim/streams.h)
  {
    name: 'cuda (CPU shim, deferred streams)',
    exact: false,
    create: () => CudaBackend.open({ library: buildCudaShim({ deferred: true }), workers: 1 }),
  },
];

const load = (c: FixtureCase, key: string) => loadArray(c, key).data;
const cases = dtcwtCases;
const noise = (length: number, seed: number) => Float32Array.from(noise64(length, seed));

function expectSameTransform(actual: Transform, expected: Transform, exact: boolean): void {
  expect([actual.height, actual.width, actual.lowpass.rows, actual.lowpass.cols]).toEqual([
    expected.height,
    expected.width,
    expected.lowpass.rows,
    expected.lowpass.cols,
  ]);
  const pairs: [Float32Array, Float32Array][] = [[actual.lowpass.data, expected.lowpass.data]];
  expect(actual.highpasses).toHaveLength(expected.highpasses.length);
  actual.highpasses.forEach((h, i) => {
    const e = expected.highpasses[i] as Transform['highpasses'][number];
    expect([h.rows, h.cols]).toEqual([e.rows, e.cols]);
    pairs.push([h.re, e.re], [h.im, e.im]);
  });
  for (const [a, e] of pairs) {
    expect(a).toBeInstanceOf(Float32Array);
    if (exact)
      expect(
        Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(e.buffer, e.byteOffset, e.byteLength)),
      ).toBe(true);
    else expect(maxAbsDiff(a, e)).toBeLessThan(1e-4 * maxAbs(e));
  }
}

const H = 135; // a 1080p frame / 8: odd height and the 4-level padding paths
const W = 240;

describe.each(BACKENDS)('DTCWT backend $name', ({ exact, batch = [H, W], create }) => {
  let backend: DtcwtBackend;
  beforeAll(async () => {
    backend = await create();
  });
  afterAll(() => backend.close());

  it.each(cases)('forward matches python dtcwt on $name to 1e-4 relative (float32)', async (c) => {
    const filters = { biort: c.biort, qshift: c.qshift };
    const t = await backend.forward(Float32Array.from(load(c, 'input')), c.height, c.width, c.levels, filters);
    expect(t.highpasses).toHaveLength(c.levels);
    const lowpass = load(c, 'lowpass');
    expect(maxAbsDiff(t.lowpass.data, lowpass)).toBeLessThan(1e-4 * maxAbs(lowpass));
    t.highpasses.forEach((h, i) => {
      for (const part of ['re', 'im'] as const) {
        const ref = load(c, `highpass${i + 1}.${part}`);
        expect(maxAbsDiff(h[part], ref)).toBeLessThan(1e-4 * maxAbs(ref));
      }
    });
  });

  it('inverse(forward(x)) gives back x to 1e-4 of its range', async () => {
    const image = noise(H * W, 7);
    const back = await backend.inverse(
      await backend.forward(image.slice(), H, W, 4, { biort: 'near_sym_b', qshift: 'qshift_b' }),
      {
        biort: 'near_sym_b',
        qshift: 'qshift_b',
      },
    );
    expect(back).toBeInstanceOf(Float32Array);
    expect(maxAbsDiff(back, image)).toBeLessThan(1e-4 * 255);
  });

  it('matches the direct float32 path of cpu.ts', async () => {
    const image = noise(H * W, 11);
    const expected = forward2d(image, H, W, 4);
    const actual = await backend.forward(image.slice(), H, W, 4);
    expectSameTransform(actual, expected, exact);
    const back = await backend.inverse(actual);
    const direct = inverse2d(expected);
    if (exact)
      expect(Buffer.from(back.buffer, back.byteOffset, back.byteLength).equals(Buffer.from(direct.buffer))).toBe(true);
    else expect(maxAbsDiff(back, direct)).toBeLessThan(1e-4 * 255);
  });

  it('runs 16 concurrent frames, each result belonging to its own frame', async () => {
    const [h, w] = batch;
    const frames = Array.from({ length: 16 }, (_, i) => noise(h * w, 100 + i));
    const transforms = await backend.forwardMany(
      frames.map((f) => ({ image: f.slice(), height: h, width: w })),
      4,
    );
    for (const [i, t] of transforms.entries())
      expectSameTransform(t, forward2d(frames[i] as Float32Array, h, w, 4), exact);
    // Independent single calls too, not only one batch call: each promise must get its own frame back.
    const backs = await Promise.all(transforms.map((t) => backend.inverse(t)));
    for (const [i, b] of backs.entries()) expect(maxAbsDiff(b, frames[i] as Float32Array)).toBeLessThan(1e-4 * 255);
  });

  it('leaves the highpasses before firstHighpass as zeros and computes the rest as usual', async () => {
    const image = noise(H * W, 13);
    const full = forward2d(image, H, W, 4);
    const t = await backend.forward(image.slice(), H, W, 4, undefined, 3);
    expect(t.highpasses.slice(0, 2).every((h) => h.re.every((v) => v === 0) && h.im.every((v) => v === 0))).toBe(true);
    expectSameTransform(
      { ...t, highpasses: t.highpasses.slice(2) },
      { ...full, highpasses: full.highpasses.slice(2) },
      exact,
    );
  });

  it('modulates a frame as the direct path does, and A and B straddle the input', async () => {
    const [h, w] = batch;
    const width = 4 * w;
    const height = 4 * h;
    // Texture at the modulated scales (wavelengths of 16–64 pixels), where the mark has energy to scale.
    const grain = noise(width * height, 17);
    const frame = Uint8Array.from(grain, (v, i) => {
      const x = i % width;
      const y = Math.floor(i / width);
      return Math.max(
        0,
        Math.min(255, Math.round(128 + 50 * Math.sin(x / 5 + Math.cos(y / 11)) * Math.cos(y / 6) + (v - 127.5) / 12)),
      );
    });
    const job = { width, height, scale: 4, levels: 3, modulated: [2, 3] as const };
    const gains = Float32Array.from(noise(modulatedCount(width, height, 4, 3, [2, 3]), 19), (v) =>
      v > 127.5 ? 0.2 : -0.2,
    );
    const expected = await modulateFrame(createCpuDirectBackend(), {
      ...job,
      frame: frame.slice(),
      gains,
      want: 'both',
    });
    const actual = await backend.modulate({ ...job, frame: frame.slice(), gains, want: 'both' });
    const tolerance = exact ? 0 : 1; // the kernels' float32 sums may round a pixel the other way
    expect(
      maxAbsDiff(Float32Array.from(actual.plus as Uint8Array), Float32Array.from(expected.plus as Uint8Array)),
    ).toBeLessThanOrEqual(tolerance);
    expect(
      maxAbsDiff(Float32Array.from(actual.minus as Uint8Array), Float32Array.from(expected.minus as Uint8Array)),
    ).toBeLessThanOrEqual(tolerance);
    let straddle = 0;
    let changed = 0;
    for (let i = 0; i < frame.length; i++) {
      const d = ((actual.plus as Uint8Array)[i] as number) - (frame[i] as number);
      if (d !== 0) changed++;
      if (d !== 0 && Math.sign(d) === -Math.sign(((actual.minus as Uint8Array)[i] as number) - (frame[i] as number)))
        straddle++;
    }
    expect(changed).toBeGreaterThan(frame.length / 4);
    expect(straddle / changed).toBeGreaterThan(0.9);
  });

  it('marks the frames that follow in a job as the direct path does, and hands every frame back', async () => {
    const [h, w] = batch;
    const width = 4 * w;
    const height = 4 * h;
    const frames = [0, 1, 2].map((k) => Uint8Array.from(noise(width * height, 31 + k), (v) => Math.round(v)));
    const job = { width, height, scale: 4, levels: 3, modulated: [2, 3] as const, want: 'both' as const };
    const gains = Float32Array.from(noise(modulatedCount(width, height, 4, 3, [2, 3]), 23), (v) =>
      v > 127.5 ? 0.2 : -0.2,
    );
    const copy = () => frames.map((f) => f.slice());
    const [first, ...next] = copy();
    const expected = await modulateFrame(createCpuDirectBackend(), { ...job, frame: first as Uint8Array, next, gains });
    const [f0, ...n0] = copy();
    const actual = await backend.modulate({ ...job, frame: f0 as Uint8Array, next: n0, gains });
    const tolerance = exact ? 0 : 1;
    expect(actual.next).toHaveLength(2);
    for (const [i, e] of [expected, ...(expected.next ?? [])].entries()) {
      const a = i === 0 ? actual : (actual.next?.[i - 1] as typeof actual);
      expect(
        maxAbsDiff(Float32Array.from(a.plus as Uint8Array), Float32Array.from(e.plus as Uint8Array)),
      ).toBeLessThanOrEqual(tolerance);
      expect(
        maxAbsDiff(Float32Array.from(a.minus as Uint8Array), Float32Array.from(e.minus as Uint8Array)),
      ).toBeLessThanOrEqual(tolerance);
    }
  });

  it('writes frames held in shared memory in place, and B into the memory given for it, chroma and all', async () => {
    const [h, w] = batch;
    const width = 4 * w;
    const height = 4 * h;
    const size = width * height + 2 * (width / 2) * (height / 2);
    const source = [0, 1].map((k) => Uint8Array.from(noise(size, 41 + k), (v) => Math.round(v)));
    const shared = () => new Uint8Array(new SharedArrayBuffer(size));
    const job = { width, height, scale: 4, levels: 3, modulated: [2, 3] as const, want: 'both' as const };
    const gains = Float32Array.from(noise(modulatedCount(width, height, 4, 3, [2, 3]), 43), (v) =>
      v > 127.5 ? 0.2 : -0.2,
    );
    const [first, next] = source.map((f) => f.slice()) as [Uint8Array, Uint8Array];
    const expected = await modulateFrame(createCpuDirectBackend(), { ...job, frame: first, next: [next], gains });
    const frames = source.map((f) => {
      const m = shared();
      m.set(f);
      return m;
    });
    const minusInto = [shared(), shared()];
    await backend.modulate({
      ...job,
      frame: frames[0] as Uint8Array,
      next: [frames[1] as Uint8Array],
      gains,
      minusInto,
    });
    const tolerance = exact ? 0 : 1;
    for (const [k, e] of [expected, expected.next?.[0]].entries()) {
      const plus = Float32Array.from(frames[k] as Uint8Array);
      const minus = Float32Array.from(minusInto[k] as Uint8Array);
      expect(maxAbsDiff(plus, Float32Array.from(e?.plus as Uint8Array))).toBeLessThanOrEqual(tolerance);
      expect(maxAbsDiff(minus, Float32Array.from(e?.minus as Uint8Array))).toBeLessThanOrEqual(tolerance);
      expect(minus.subarray(width * height)).toEqual(
        Float32Array.from((source[k] as Uint8Array).subarray(width * height)),
      );
    }
  });

  it('refuses a modulate job with the wrong number of gains or levels', async () => {
    const frame = new Uint8Array(64 * 64);
    await expect(
      backend.modulate({
        frame,
        width: 64,
        height: 64,
        scale: 2,
        levels: 3,
        modulated: [2, 3],
        gains: new Float32Array(5),
        want: 'plus',
      }),
    ).rejects.toThrow(/5 gains for \d+ coefficients/);
    await expect(
      backend.modulate({
        frame: new Uint8Array(64 * 64),
        width: 64,
        height: 64,
        scale: 2,
        levels: 3,
        modulated: [4],
        gains: new Float32Array(5),
        want: 'plus',
      }),
    ).rejects.toThrow(/level 4 is not one of the 3 levels/);
    const twice = modulatedCount(64, 64, 2, 3, [2]) * 2;
    await expect(
      backend.modulate({
        frame: new Uint8Array(64 * 64),
        width: 64,
        height: 64,
        scale: 2,
        levels: 3,
        modulated: [2, 2],
        gains: new Float32Array(twice),
        want: 'plus',
      }),
    ).rejects.toThrow(/a level is listed twice/);
  });

  it('rejects only the job that is wrong', async () => {
    const good = noise(H * W, 3);
    const results = await Promise.allSettled([
      backend.forward(good.slice(), H, W, 3),
      backend.forward(new Float32Array(10), 3, 4, 2),
      backend.forward(good.slice(), H, W, 3, { biort: 'nope' as BiortName }),
      backend.forward(good.slice(), H, W, 3),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    const [, sizeError, filterError] = results as PromiseRejectedResult[];
    expect(sizeError?.reason).toBeInstanceOf(RangeError);
    expect(String(sizeError?.reason)).toMatch(/image length does not match/);
    expect(String(filterError?.reason)).toMatch(/unknown biort filter/);
    // Still usable afterwards.
    const t = await backend.forward(good.slice(), H, W, 3);
    expectSameTransform(t, forward2d(good, H, W, 3, dtcwtFilters()), exact);
  });

  it('rejects calls after close()', async () => {
    const other = await create();
    await other.close();
    await other.close(); // idempotent
    await expect(other.forward(noise(16, 1), 4, 4, 1)).rejects.toThrow(/closed/);
  });
});

describe('CPU pool lifecycle', () => {
  it('starts workers lazily and close() terminates them', async () => {
    const pool = new CpuPoolBackend({ workers: 2 });
    expect(pool.name).toBe('cpu (2 workers)');
    expect(pool.workerCount).toBe(0);
    await pool.forwardMany(
      Array.from({ length: 4 }, (_, i) => ({ image: noise(64 * 64, i), height: 64, width: 64 })),
      2,
    );
    expect(pool.workerCount).toBe(2);
    // Attach the expectation before close() so the rejection is never unhandled.
    const pending = expect(pool.forward(noise(H * W, 5), H, W, 4)).rejects.toThrow(/closed/);
    await pool.close();
    await pending;
    expect(pool.workerCount).toBe(0);
  });

  it('createDtcwtBackend picks the pool and names it', async () => {
    const backend = await createDtcwtBackend('auto', { workers: 1 });
    expect(backend.name).toBe('cpu (1 worker)');
    await backend.close();
    expect(() => new CpuPoolBackend({ workers: 0 })).toThrow(RangeError);
  });

  it('lets a plain `node --import tsx` process exit after close()', () => {
    const index = new URL('../../gpu/index.ts', import.meta.url).href;
    const script = `
      const { createDtcwtBackend } = await import(${JSON.stringify(index)});
      const b = await createDtcwtBackend('cpu', { workers: 2 });
      const t = await b.forward(new Float32Array(64 * 64).fill(1), 64, 64, 2);
      const x = await b.inverse(t);
      await b.close();
      console.log(b.name, x.length);`;
    const cwd = new URL('../../', import.meta.url);
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe('cpu (2 workers) 4096');
  });
});
