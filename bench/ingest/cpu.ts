// Where a watermarked ingest's CPU goes: `npm run bench:ingest:cpu -- [--input FILE] [--plain] [--json]`.
//
// Runs `drm ingest` (watermarked unless --plain) on the clip as a child process, and every 200 ms
// reads /proc for it and every process under it: each ffmpeg by what it does (the decode with the
// stills it writes, x264 of variant A or B), and drm's own main thread apart from its other
// threads (the mark's workers). Prints the wall time and the CPU seconds of each, which on a
// machine whose cores are all busy is what bounds the ingest. A process that lives less than one
// sample may be missed; its CPU then shows in no row. Prints numbers; not a test.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../../test/helpers/serve-process.js';
import { corpusFile } from '../corpus.js';

interface Seen {
  label: string;
  cpu: number;
  first: number;
  last: number;
}

const { values } = parseArgs({
  options: {
    input: { type: 'string', default: '/tmp/corpus/photo-1080p-60s.mp4' },
    plain: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
corpusFile(values.input);
const SAMPLE_MS = 200;

/** utime + stime in seconds of a process (`/proc/PID/stat`) or one of its threads (`/proc/PID/task/TID/stat`). */
function cpuOf(statFile: string): number | undefined {
  try {
    const text = fs.readFileSync(statFile, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return undefined; // gone
  }
}

function commandOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

function childrenOf(pid: number): number[] {
  try {
    const text = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return text ? text.split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}

/** What an ingest's process does, from its command line (src/media and src/domain/ingest build them). */
function labelOf(command: string, root: number, pid: number): string {
  if (pid === root) return 'drm';
  if (command.includes('ffprobe')) return 'ffprobe';
  if (!command.includes('ffmpeg')) return command.split(' ')[0] ?? 'other';
  if (command.includes('-f rawvideo') && command.includes('pipe:0')) {
    const into = (variant: string) => command.includes(`${path.sep}${variant}${path.sep}`);
    return `ffmpeg: x264 of variant ${into('a') ? 'A' : into('b') ? 'B' : '?'} (from drm's raw frames)`;
  }
  if (command.includes('split=')) return 'ffmpeg: the decode for the mark (with the reference, thumbnail, preview)';
  if (command.includes('hls_key_info_file')) return 'ffmpeg: the transcode (plain, with the thumbnail and preview)';
  if (command.includes('showwavespic')) return "ffmpeg: music's thumbnail";
  return 'ffmpeg: other';
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-bench-ingest-cpu-'));
execFileSync(process.execPath, ['bin/drm.js', 'migrate', '--data-dir', dir], { cwd: ROOT });
const ingestArgs = ['ingest', values.input, '--title', 'bench', '--type', 'video', '--json', '--data-dir', dir];
if (!values.plain) ingestArgs.push('--watermark');
const started = performance.now();
const child = spawn(process.execPath, ['bin/drm.js', ...ingestArgs], {
  cwd: ROOT,
  stdio: ['ignore', 'pipe', 'inherit'],
});
const root = child.pid as number;
let stdout = '';
child.stdout.setEncoding('utf8').on('data', (d: string) => {
  stdout += d;
});
const seen = new Map<number, Seen>();
let mainThread = 0;
const sample = () => {
  const now = (performance.now() - started) / 1000;
  const visit = (pid: number) => {
    const cpu = cpuOf(`/proc/${pid}/stat`);
    if (cpu !== undefined) {
      const entry = seen.get(pid) ?? { label: labelOf(commandOf(pid), root, pid), cpu, first: now, last: now };
      entry.cpu = cpu;
      entry.last = now;
      seen.set(pid, entry);
      if (pid === root) mainThread = cpuOf(`/proc/${pid}/task/${pid}/stat`) ?? mainThread;
    }
    for (const c of childrenOf(pid)) visit(c);
  };
  visit(root);
};
const timer = setInterval(sample, SAMPLE_MS);
const code: number | null = await new Promise((resolve) => child.once('exit', resolve));
clearInterval(timer);
const wall = (performance.now() - started) / 1000;
fs.rmSync(dir, { recursive: true, force: true });
if (code !== 0) throw new Error(`drm ingest exited ${code}`);

const rows = new Map<string, { cpu: number; from: number; to: number }>();
for (const e of seen.values()) {
  const label = e.label === 'drm' ? "drm's other threads (the mark's workers)" : e.label;
  const cpu = e.label === 'drm' ? e.cpu - mainThread : e.cpu;
  const row = rows.get(label) ?? { cpu: 0, from: e.first, to: e.last };
  rows.set(label, { cpu: row.cpu + cpu, from: Math.min(row.from, e.first), to: Math.max(row.to, e.last) });
}
rows.set("drm's main thread", { cpu: mainThread, from: 0, to: wall });
const sorted = [...rows].sort((a, b) => b[1].cpu - a[1].cpu);
const total = sorted.reduce((s, [, r]) => s + r.cpu, 0);
const what = `${values.plain ? 'plain' : 'watermarked'} ingest of ${path.basename(values.input)}`;
if (values.json) {
  const processes = sorted.map(([label, r]) => ({ label, cpuSeconds: r.cpu, from: r.from, to: r.to }));
  process.stdout.write(`${JSON.stringify({ what, wallSeconds: wall, cpuSeconds: total, processes }, null, 2)}\n`);
} else {
  const busy = `${(total / wall).toFixed(2)} of ${os.availableParallelism()} cores busy`;
  process.stdout.write(
    `${what}: ${wall.toFixed(1)} s wall, ${total.toFixed(1)} s CPU (${busy})\n\n` +
      '| process | CPU s | share | alive (s from start) |\n|---|---|---|---|\n' +
      sorted
        .map(([label, r]) => {
          const share = `${((100 * r.cpu) / total).toFixed(0)}%`;
          return `| ${label} | ${r.cpu.toFixed(1)} | ${share} | ${r.from.toFixed(1)}–${r.to.toFixed(1)} |`;
        })
        .join('\n') +
      `\n\nthe ingest's own result: ${stdout.trim().replace(/\s+/g, ' ')}\n`,
  );
}
