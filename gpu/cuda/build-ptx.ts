/**
 * `npm run build:ptx`: compiles kernels/*.cu to ptx/*.ptx with nvcc and records what made them in
 * ptx/manifest.json (the compiler's version line, the flags, and a SHA-256 of each module's sources),
 * so that a test can fail when a .cu changes without its PTX.
 *
 * nvcc rather than clang: CUDA 13's nvcc is on the machines this project builds on and on the GPU
 * machine, and its PTX is what NVIDIA's driver JIT is tested against. `compute_75` is the oldest
 * target CUDA 13 offers; the driver compiles it for any newer card.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KERNEL_MODULES } from './program.js';
import { moduleSourceHash, PTX_FLAGS } from './ptx-manifest.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const nvcc = process.env.NVCC ?? 'nvcc';

function compilerVersion(): string {
  try {
    const out = execFileSync(nvcc, ['--version'], { encoding: 'utf8' });
    return out.trim().split('\n').filter(Boolean).slice(-2).join('; ');
  } catch {
    console.error(`build:ptx: ${nvcc} was not found; install the CUDA toolkit (nvcc 13) or set NVCC`);
    process.exit(1);
  }
}

const compiler = compilerVersion();
const modules: Record<string, { sources: string; ptx: string }> = {};
for (const name of Object.keys(KERNEL_MODULES)) {
  const out = path.join(here, 'ptx', `${name}.ptx`);
  execFileSync(nvcc, [...PTX_FLAGS, '-o', out, path.join(here, 'kernels', `${name}.cu`)], { stdio: 'inherit' });
  // nvcc writes its build id and version into the PTX header; the manifest keeps them too
  modules[name] = { sources: moduleSourceHash(name), ptx: `${name}.ptx` };
}
const manifest = { compiler: `nvcc: ${compiler}`, flags: PTX_FLAGS, modules };
fs.writeFileSync(path.join(here, 'ptx', 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.error(`build:ptx: ${Object.keys(modules).length} modules with ${compiler}`);
