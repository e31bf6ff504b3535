/**
 * Builds the CPU shim (cuda-shim.cpp with the kernel files compiled as C++) into a shared library
 * that CudaDriver loads in place of libcuda.so.1. Used by the tests, which run where there is no
 * GPU; cached by a hash of the sources, so a run compiles it once. `deferred` builds the one whose
 * streams run their work only when waited for, as a GPU's do (streams.h): a library of its own, so
 * that one test process can hold both.
 *
 * g++ by default (Node's toolchain for native addons puts it on every machine that builds this
 * project); CXX=clang++ works the same.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KERNEL_MODULES } from '../program.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const kernels = path.join(here, '..', 'kernels');

export function cudaShimSources(): string[] {
  return [
    path.join(here, 'cuda-shim.cpp'),
    path.join(here, 'cuda-shim.h'),
    path.join(here, 'streams.cpp'),
    path.join(here, 'streams.h'),
    path.join(kernels, 'common.cuh'),
    ...Object.keys(KERNEL_MODULES).map((m) => path.join(kernels, `${m}.cu`)),
  ];
}

/** The path of the built shim library, compiling it first when its sources changed. */
export function buildCudaShim(options: { deferred?: boolean; dir?: string } = {}): string {
  const dir = options.dir ?? path.join(os.tmpdir(), 'drm-cuda-shim');
  const schedule = options.deferred ? ['-DDRM_SHIM_DEFERRED'] : [];
  const hash = createHash('sha256').update(schedule.join(' '));
  for (const file of cudaShimSources()) hash.update(fs.readFileSync(file));
  const out = path.join(dir, `cuda-shim-${hash.digest('hex').slice(0, 16)}.so`);
  if (fs.existsSync(out)) return out;
  fs.mkdirSync(dir, { recursive: true });
  const partial = `${out}.${process.pid}.tmp`;
  const cu = Object.keys(KERNEL_MODULES).map((m) => path.join(kernels, `${m}.cu`));
  const args = ['-std=c++17', '-O2', '-fPIC', '-shared', '-pthread', '-DDRM_SHIM', ...schedule, '-o', partial];
  const shim = ['cuda-shim.cpp', 'streams.cpp'].map((f) => path.join(here, f));
  execFileSync(process.env.CXX ?? 'g++', [...args, ...shim, '-x', 'c++', ...cu], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  fs.renameSync(partial, out); // whole or not at all, when test files build it at once
  return out;
}
