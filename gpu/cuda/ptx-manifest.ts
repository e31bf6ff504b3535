/** What build-ptx.ts records about the committed PTX, and the hash it checks the sources by. */
import { createHash } from 'node:crypto';
import fs from 'node:fs';

export const PTX_FLAGS = ['-ptx', '-arch=compute_75', '--fmad=false', '-O3'];

/** SHA-256 of a module's .cu file and the header every kernel file includes. */
export function moduleSourceHash(module: string): string {
  const hash = createHash('sha256');
  for (const file of ['kernels/common.cuh', `kernels/${module}.cu`])
    hash.update(fs.readFileSync(new URL(`./${file}`, import.meta.url)));
  return hash.digest('hex');
}

export interface PtxManifest {
  compiler: string;
  flags: string[];
  modules: Record<string, { sources: string; ptx: string }>;
}

export function readPtxManifest(): PtxManifest {
  return JSON.parse(fs.readFileSync(new URL('./ptx/manifest.json', import.meta.url), 'utf8')) as PtxManifest;
}
