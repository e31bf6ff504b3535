import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createCpuDirectBackend } from '../../gpu/cpu-direct.js';
import { CudaBackend } from '../../gpu/cuda/backend.js';
import { ptxText } from '../../gpu/cuda/device.js';
import { KERNEL_MODULES } from '../../gpu/cuda/program.js';
import { moduleSourceHash, readPtxManifest } from '../../gpu/cuda/ptx-manifest.js';
import { backendKind, createDtcwtBackend } from '../../gpu/index.js';
import type { ModulateJob } from '../../gpu/modulate.js';
import { buildCudaShim } from '../../gpu/cuda/shim/build.js';
import {
  type CudaShim,
  copyOf,
  expectLikeCpu,
  frame,
  gainsFor,
  job,
  SCHEDULES,
  shimFor,
} from '../helpers/cuda-shim.js';

// The CUDA backend's host side (memory plan, batches, streams, failures) on the CPU shim: the same
// kernel sources compiled as C++, behind the driver calls libcuda.so.1 answers on a GPU.
let library: string;
let shim: CudaShim;
const useShim = (s: CudaShim) => {
  shim = s;
  library = s.library;
};

function ptxasVersion(): string | undefined {
  try {
    return execFileSync('ptxas', ['--version'], { encoding: 'utf8' });
  } catch {
    return undefined;
  }
}

/** ptxas's resource report for one module's committed PTX compiled for `arch`. */
function assemble(module: string, arch: string): string {
  const ptx = fileURLToPath(new URL(`../../gpu/cuda/ptx/${module}.ptx`, import.meta.url));
  const out = path.join(os.tmpdir(), `drm-ptxas-${process.pid}-${module}-${arch}.cubin`);
  try {
    const run = spawnSync('ptxas', [`-arch=${arch}`, '-v', ptx, '-o', out], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    return run.stderr + run.stdout;
  } finally {
    fs.rmSync(out, { force: true });
  }
}

describe('CUDA kernels as committed PTX', () => {
  it('has PTX made from the current .cu sources, by the compiler the manifest names', () => {
    const manifest = readPtxManifest();
    expect(manifest.compiler).toMatch(/^nvcc: Cuda compilation tools, release \d+\.\d+/);
    expect(manifest.flags).toContain('-arch=compute_75');
    for (const [module, kernels] of Object.entries(KERNEL_MODULES)) {
      // Fails when a kernel file changes without `npm run build:ptx`.
      expect(manifest.modules[module]?.sources, `${module}.cu changed: run npm run build:ptx`).toBe(
        moduleSourceHash(module),
      );
      const ptx = ptxText(module);
      expect(ptx).toMatch(/\.target sm_75/);
      for (const k of kernels) expect(ptx).toContain(`.visible .entry ${k}(`);
    }
  });

  // The driver JIT-compiles the PTX for the card in hand; ptxas is that compiler offline, so where the
  // toolkit is present a kernel that would not load, or would spill registers to memory, fails here.
  it.skipIf(!ptxasVersion())('assembles for Turing and Hopper as the driver would, without spilling registers', () => {
    for (const [module, kernels] of Object.entries(KERNEL_MODULES)) {
      for (const arch of ['sm_75', 'sm_90']) {
        const report = assemble(module, arch);
        for (const k of kernels)
          expect(report, `${module} for ${arch}`).toContain(`entry function '${k}' for '${arch}'`);
        expect(report, `${module} for ${arch}`).not.toMatch(/[1-9]\d* bytes spill (stores|loads)/);
      }
    }
  });

  it('ships the PTX in the build beside the bundle', () => {
    const build = fs.readFileSync(new URL('../../scripts/build.mjs', import.meta.url), 'utf8');
    expect(build).toContain('gpu/cuda/ptx');
  });
});

describe.each(SCHEDULES)('CUDA backend on the CPU shim, with %s', (_, deferred) => {
  shimFor(deferred, useShim);

  it('names the device it runs on and frees all device and pinned memory on close', async () => {
    const cuda = await CudaBackend.open({ library });
    expect(cuda.name).toBe('cuda (drm CPU shim (compute 8.0, driver 13.0))');
    await cuda.modulate(job([frame(1), frame(1)], gainsFor(1)));
    expect(shim.live()).toBeGreaterThan(0);
    await cuda.close();
    expect(shim.live()).toBe(0);
  });

  it('batches jobs of different segments, run lengths and wants, each marked as the CPU marks it', async () => {
    const cuda = await CudaBackend.open({ library, batchFrames: 6, slots: 2 });
    const requests = [
      job([frame(1), frame(1)], gainsFor(1)),
      job([frame(2), frame(90)], gainsFor(1)), // a cut inside the run: the second frame gets its own δ
      job([frame(3)], gainsFor(2), 'plus'),
      job([frame(4), frame(4), frame(4)], gainsFor(2), 'minus'),
      job([frame(5), frame(5)], gainsFor(3)),
    ];
    const copies = requests.map(copyOf);
    const results = requests.map((r) => cuda.modulate(r));
    for (const [i, r] of results.entries()) await expectLikeCpu(r, copies[i] as ModulateJob);
    await cuda.close();
  });

  it('brings back from the device only the variants a job wants', async () => {
    const cuda = await CudaBackend.open({ library });
    const copiesFor = async (want: ModulateJob['want']) => {
      const before = shim.copies().staging;
      const request = job([frame(13), frame(13)], gainsFor(13), want);
      await expectLikeCpu(cuda.modulate(request), copyOf(request));
      return shim.copies().staging - before;
    };
    await copiesFor('both'); // a slot's first batch also uploads its arena's constants (the filter taps)
    const both = await copiesFor('both');
    // A comes back in one copy for the batch, B in one a frame
    expect([both - (await copiesFor('plus')), both - (await copiesFor('minus'))]).toEqual([2, 1]);
    await cuda.close();
  });

  it('waits for one batch at a time off the main thread, however many are in flight', async () => {
    // each wait holds one of libuv's threads, which the server beside it also reads files on
    const cuda = await CudaBackend.open({ library, batchFrames: 2, slots: 3 });
    expect(cuda.waits).toBe('off-thread');
    shim.waitDelay(20);
    shim.mostOffThreadWaits(); // counts from here
    const requests = [1, 2, 3, 4, 5, 6].map((seed) => job([frame(seed), frame(seed)], gainsFor(seed)));
    const copies = requests.map(copyOf);
    const results = requests.map((r) => cuda.modulate(r));
    for (const [i, r] of results.entries()) await expectLikeCpu(r, copies[i] as ModulateJob);
    expect(shim.mostOffThreadWaits()).toBe(1);
    await cuda.close();
  });

  it('polls the stream instead when a wait off the main thread finds no context, and marks the same', async () => {
    const cuda = await CudaBackend.open({ library });
    expect(cuda.waits).toBe('off-thread');
    shim.refuseOffThreadWait(1);
    const request = job([frame(11), frame(11)], gainsFor(11));
    await expectLikeCpu(cuda.modulate(request), copyOf(request));
    expect([cuda.waits, cuda.name]).toEqual(['polling', expect.stringMatching(/^cuda \(/)]);
    await cuda.close();
  });

  it('polls from the start where the driver refuses waits off the main thread', async () => {
    shim.refuseOffThreadWait(1);
    const cuda = await CudaBackend.open({ library });
    expect(cuda.waits).toBe('polling');
    const request = job([frame(12)], gainsFor(12));
    await expectLikeCpu(cuda.modulate(request), copyOf(request));
    await cuda.close();
    expect(shim.live()).toBe(0);
  });

  it('finishes on the CPU with one warning when a launch fails, and frees the device memory', async () => {
    const warnings: string[] = [];
    const cuda = await CudaBackend.open({ library, workers: 1, onWarning: (m) => warnings.push(m) });
    const request = job([frame(7), frame(7)], gainsFor(7));
    const copy = copyOf(request);
    shim.failLaunch(5); // mid-batch: earlier launches have run, no frame has been written yet
    await expectLikeCpu(cuda.modulate(request), copy);
    expect(warnings).toEqual([expect.stringMatching(/CUDA_ERROR_LAUNCH_FAILED.*finishing on the CPU/)]);
    expect(cuda.name).toMatch(/^cpu \(1 worker\) after CUDA failed on drm CPU shim .*CUDA_ERROR_LAUNCH_FAILED/);
    await expectLikeCpu(cuda.modulate(job([frame(8)], gainsFor(8))), job([frame(8)], gainsFor(8)));
    await cuda.close();
    expect(shim.live()).toBe(0);
    expect(warnings).toHaveLength(1);
  });

  it('finishes on the CPU when the device is out of memory', async () => {
    const warnings: string[] = [];
    const cuda = await CudaBackend.open({ library, workers: 1, onWarning: (m) => warnings.push(m) });
    shim.memoryLimit(4096);
    await expectLikeCpu(cuda.modulate(job([frame(9)], gainsFor(9))), job([frame(9)], gainsFor(9)));
    expect(warnings[0]).toMatch(/CUDA_ERROR_OUT_OF_MEMORY/);
    await cuda.close();
    expect(shim.live()).toBe(0);
  });

  it('falls back for transforms too, and still refuses bad input as the CPU does', async () => {
    const cuda = await CudaBackend.open({ library, workers: 1, onWarning: () => {} });
    const image = Float32Array.from({ length: 48 * 64 }, (_, i) => (i * 37) % 251);
    shim.failLaunch(2);
    const t = await cuda.forward(image.slice(), 48, 64, 3);
    expect(t.highpasses).toHaveLength(3);
    expect(cuda.name).toMatch(/after CUDA failed/);
    await expect(cuda.forward(new Float32Array(10), 3, 4, 2)).rejects.toThrow(/image length does not match/);
    await cuda.close();
    expect(shim.live()).toBe(0);
  });
});

describe.each(SCHEDULES)('CUDA transforms on the CPU shim, with %s', (_, deferred) => {
  shimFor(deferred, useShim);

  it('inverts transforms of different sizes in one call, each to its own size', async () => {
    const cuda = await CudaBackend.open({ library });
    const cpu = createCpuDirectBackend();
    const sizes = [
      [7, 8],
      [8, 8],
      [12, 20],
    ] as const;
    const images = sizes.map(([h, w], i) => Float32Array.from({ length: h * w }, (_, k) => ((k + i) * 53) % 97));
    const transforms = await Promise.all(
      sizes.map(([h, w], i) => cpu.forward((images[i] as Float32Array).slice(), h, w, 2)),
    );
    const backs = await cuda.inverseMany(transforms);
    expect(backs.map((b) => b.length)).toEqual([56, 64, 240]);
    for (const [i, b] of backs.entries()) {
      const ref = await cpu.inverse(transforms[i] as (typeof transforms)[number]);
      expect(Math.max(...b.map((v, k) => Math.abs(v - (ref[k] as number))))).toBeLessThan(1e-3);
    }
    await cuda.close();
  });
});

describe('backend selection', () => {
  it('takes --backend, else DRM_BACKEND, else auto, and refuses any other name', () => {
    expect(backendKind('cpu', { DRM_BACKEND: 'cuda' })).toBe('cpu');
    expect(backendKind(undefined, { DRM_BACKEND: 'cuda' })).toBe('cuda');
    expect(backendKind(undefined, {})).toBe('auto');
    expect(() => backendKind(undefined, { DRM_BACKEND: 'tfjs' })).toThrow(/use auto, cpu or cuda/);
  });

  it('auto takes CUDA where the driver loads, else the CPU pool and says why', async () => {
    const saved = process.env.DRM_CUDA_LIBRARY;
    try {
      process.env.DRM_CUDA_LIBRARY = buildCudaShim();
      const gpu = await createDtcwtBackend('auto', { workers: 1 });
      expect(gpu.name).toMatch(/^cuda \(drm CPU shim/);
      await gpu.close();
      process.env.DRM_CUDA_LIBRARY = '/nonexistent/libcuda.so.1';
      const cpu = await createDtcwtBackend('auto', { workers: 1 });
      expect([cpu.name, cpu.note]).toEqual([
        'cpu (1 worker)',
        'CUDA not used: no NVIDIA driver (libcuda.so.1 not found)',
      ]);
      await cpu.close();
      await expect(createDtcwtBackend('cuda')).rejects.toThrow(
        '--backend cuda: CUDA is not available here: no NVIDIA driver (libcuda.so.1 not found)',
      );
    } finally {
      if (saved === undefined) delete process.env.DRM_CUDA_LIBRARY;
      else process.env.DRM_CUDA_LIBRARY = saved;
    }
  });
});
