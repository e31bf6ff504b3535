import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCudaShim } from '../../gpu/cuda/shim/build.js';
import { drm, runDrm } from '../helpers/serve-process.js';

// `drm doctor` checks what the machine and the deployment need, each with its fix.

const T = 120_000;
type Report = { ok: boolean; checks: { name: string; status: string; detail?: string; fix?: string }[] };

describe('drm doctor', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-doctor-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it(
    'fails, with the fix, where there is no deployment yet',
    async () => {
      const r = await runDrm(['doctor', '--data-dir', path.join(dir, 'none'), '--json'], {}, T);
      expect(r.code).toBe(1);
      const report = JSON.parse(r.stdout) as Report;
      expect(report.ok).toBe(false);
      expect(report.checks.find((c) => c.name === 'data directory')).toMatchObject({
        status: 'fail',
        fix: expect.stringContaining('drm serve'),
      });
    },
    T,
  );

  it(
    'passes on a migrated deployment, and says when the MPEG-TS probe needs a system ffprobe',
    async () => {
      await drm(['migrate', '--data-dir', dir]);
      const shipped = JSON.parse((await runDrm(['doctor', '--data-dir', dir, '--json'], {}, T)).stdout) as Report;
      expect(shipped.checks.map((c) => c.name)).toEqual([
        'ffmpeg',
        'ffprobe',
        'ffprobe on MPEG-TS',
        'DTCWT backend',
        'GPU backend',
        'data directory',
        'server secret',
        'database',
        'content store',
        'chromium (tests)',
      ]);
      expect(shipped.checks.filter((c) => c.status === 'fail')).toEqual([]);
      const probe = shipped.checks.find((c) => c.name === 'ffprobe on MPEG-TS');
      if (probe?.status === 'warn') expect(probe.fix).toContain('DRM_FFPROBE');
      if (fs.existsSync('/usr/bin/ffprobe')) {
        const system = JSON.parse(
          (await runDrm(['doctor', '--data-dir', dir, '--json'], { DRM_FFPROBE: '/usr/bin/ffprobe' }, T)).stdout,
        ) as Report;
        expect(system.checks.find((c) => c.name === 'ffprobe on MPEG-TS')?.status).toBe('ok');
      }
      // No NVIDIA driver here: the GPU check says why marking runs on the CPU; with the CPU shim in the
      // driver's place it names the device the CUDA backend would use.
      expect(shipped.checks.find((c) => c.name === 'GPU backend')).toMatchObject({
        status: 'warn',
        detail: expect.stringContaining('CUDA not used (no NVIDIA driver (libcuda.so.1 not found))'),
      });
      const gpu = JSON.parse(
        (await runDrm(['doctor', '--data-dir', dir, '--json'], { DRM_CUDA_LIBRARY: buildCudaShim() }, T)).stdout,
      ) as Report;
      expect(gpu.checks.find((c) => c.name === 'GPU backend')).toMatchObject({
        status: 'ok',
        detail: 'CUDA on drm CPU shim (compute 8.0, driver 13.0): --backend auto marks on the GPU',
      });
      expect(gpu.checks.find((c) => c.name === 'DTCWT backend')?.detail).toMatch(/^cuda \(drm CPU shim/);
      const r = await runDrm(['doctor', '--data-dir', dir], {}, T);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/all needed is in place/);
    },
    T,
  );
});
