import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MediaBinaries } from '../media/binaries.js';
import type { Check } from './check.js';

const firstLine = (out: string) => out.split('\n')[0]?.trim() ?? '';

/** ffmpeg and ffprobe answer, and whether this ffprobe survives an MPEG-TS file (the shipped 2023 build does not). */
export function mediaChecks(bins: MediaBinaries): Check[] {
  const checks: Check[] = [];
  for (const [name, file, variable] of [
    ['ffmpeg', bins.ffmpeg, 'DRM_FFMPEG'],
    ['ffprobe', bins.ffprobe, 'DRM_FFPROBE'],
  ] as const) {
    const r = spawnSync(file, ['-version'], { encoding: 'utf8', timeout: 15_000 });
    checks.push(
      r.status === 0
        ? { name, status: 'ok', detail: `${firstLine(r.stdout).slice(0, 80)} (${file})` }
        : {
            name,
            status: 'fail',
            detail: `${file} does not run: ${r.error?.message ?? `exit ${r.status}`}`,
            fix: `npm ci again, or point ${variable} at a system build (apt-get install ffmpeg)`,
          },
    );
  }
  checks.push(mpegTsProbe(bins));
  return checks;
}

function mpegTsProbe(bins: MediaBinaries): Check {
  const name = 'ffprobe on MPEG-TS';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-doctor-'));
  try {
    const ts = path.join(dir, 'probe.ts');
    const made = spawnSync(
      bins.ffmpeg,
      [
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=160x90:rate=10',
        '-t',
        '0.5',
        '-c:v',
        'libx264',
        '-f',
        'mpegts',
        ts,
      ],
      { timeout: 30_000 },
    );
    if (made.status !== 0) return { name, status: 'warn', detail: 'could not make a test segment with ffmpeg' };
    const probe = spawnSync(bins.ffprobe, ['-v', 'error', '-show_format', ts], { timeout: 15_000 });
    if (probe.signal === 'SIGSEGV') {
      return {
        name,
        status: 'warn',
        detail: 'this ffprobe crashes (SIGSEGV) on MPEG-TS; drm falls back to ffmpeg for such files',
        fix: 'DRM_FFPROBE=/usr/bin/ffprobe (apt-get install ffmpeg) probes them directly',
      };
    }
    return probe.status === 0
      ? { name, status: 'ok', detail: 'reads an HLS segment' }
      : { name, status: 'warn', detail: `ffprobe exited ${probe.status} on a segment` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
