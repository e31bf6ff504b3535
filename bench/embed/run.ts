// Embedding speed: `npm run bench:embed -- [--input FILE] [--frames 150] [--runs 3] [--backends cpu,pool,cuda] [--full] [--json]`.
//
// Decodes the clip (yuv420p, src/media/video-frames.ts) and, per backend, marks every frame and writes
// both variants A and B (src/watermark/video/mark.ts), without encoding: what ingest does before
// its two x264 encodes. Each figure is the median of --runs timed runs after a warm-up; beside it
// decoding alone, measured in the same run, so the embedding cost reads apart from ffmpeg's.
// Frames are kept in flight in a small window so a pool can use every core.
//
// --full also marks the whole clip into an MP4 through embedVideo (decode, mark, x264 CRF 18) and
// reports its wall time and the peak resident memory of this process and of each ffmpeg child
// (VmHWM, sampled from /proc): the memory a 60-s 1080p embed needs. Prints numbers; not a test.
import Table from 'cli-table3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { DtcwtBackend } from '../../gpu/backend.js';
import { createCpuDirectBackend } from '../../gpu/cpu-direct.js';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { yuvFrames } from '../../src/media/video-frames.js';
import { probeMedia } from '../../src/media/probe.js';
import { embedVideo } from '../../src/watermark/video/embed.js';
import { watermarkKey } from '../../src/watermark/keyed-random.js';
import {
  DEFAULT_VIDEO_MARK,
  markFrame,
  patternLength,
  segmentGains,
  segmentPattern,
} from '../../src/watermark/video/mark.js';
import { corpusFile } from '../corpus.js';
import { FIXED_RULE } from '../../src/watermark/segment-rule.js';

const { values } = parseArgs({
  options: {
    input: { type: 'string', default: '/tmp/corpus/photo-1080p-60s.mp4' },
    frames: { type: 'string', default: '150' },
    runs: { type: 'string', default: '3' },
    full: { type: 'boolean', default: false },
    backends: { type: 'string', default: 'cpu,pool' },
    window: { type: 'string', default: String(Math.max(2, os.availableParallelism() * 2)) },
    json: { type: 'boolean', default: false },
  },
});
corpusFile(values.input);
const frames = Number(values.frames);
const runs = Math.max(1, Number(values.runs));
const windowSize = Number(values.window);
const bins = mediaBinaries();
const info = await probeMedia(bins, values.input);
if (!info.video) throw new Error(`${values.input} has no video`);
const { width, height } = info.video;
const progress = (m: string) => process.stderr.write(`bench: ${m}\n`);
const peakRssMiB = () => Math.round(process.resourceUsage().maxRSS / 1024);

async function makeBackend(name: string): Promise<DtcwtBackend> {
  if (name === 'cpu') return createCpuDirectBackend();
  if (name === 'pool') return createCpuPoolBackend();
  if (name === 'cuda') return (await import('../../gpu/cuda/backend.js')).CudaBackend.open();
  throw new Error(`unknown backend ${name} (cpu, pool, cuda)`);
}

async function decodeOnly(): Promise<number> {
  const t = performance.now();
  let n = 0;
  for await (const _ of yuvFrames(bins, values.input, { width, height })) if (++n >= frames) break;
  return n / ((performance.now() - t) / 1000);
}

async function embed(backend: DtcwtBackend): Promise<number> {
  const gains = segmentGains(
    segmentPattern(watermarkKey(Buffer.alloc(32, 1)), 'bench', 0, patternLength(width, height)),
  );
  const inFlight = new Set<Promise<unknown>>();
  const t = performance.now();
  let n = 0;
  for await (const frame of yuvFrames(bins, values.input, { width, height })) {
    const job = markFrame(backend, frame, width, height, gains, 'both');
    inFlight.add(job);
    void job.finally(() => inFlight.delete(job));
    if (inFlight.size >= windowSize) await Promise.race(inFlight);
    if (++n >= frames) break;
  }
  await Promise.all(inFlight);
  return n / ((performance.now() - t) / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Peak resident memory (VmHWM) of this process's children, sampled from /proc while `work` runs. */
async function withChildPeaks<T>(
  work: Promise<T>,
): Promise<{ result: T; children: Map<number, { name: string; peakMiB: number }> }> {
  const children = new Map<number, { name: string; peakMiB: number }>();
  const sample = () => {
    for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
        if (Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) !== process.pid) continue;
        const peakMiB = Math.round(Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024);
        const name = /^Name:\s+(\S+)/m.exec(status)?.[1] ?? '?';
        children.set(Number(pid), { name, peakMiB: Math.max(peakMiB, children.get(Number(pid))?.peakMiB ?? 0) });
      } catch {
        // the process ended between listing and reading
      }
    }
  };
  const timer = setInterval(sample, 100);
  try {
    return { result: await work, children };
  } finally {
    clearInterval(timer);
  }
}

// First, so that this process's peak RSS is the embed's own and not the speed runs' below.
let full:
  | { seconds: number; frames: number; nodePeakMiB: number; children: Array<{ name: string; peakMiB: number }> }
  | undefined;
if (values.full) {
  const backend = createCpuPoolBackend();
  const out = path.join(os.tmpdir(), `drm-bench-embed-${process.pid}.mp4`);
  progress(`full embed of ${values.input} into ${out}`);
  const before = peakRssMiB();
  const t = performance.now();
  try {
    const { result, children } = await withChildPeaks(
      embedVideo({
        rule: FIXED_RULE,
        bins,
        key: watermarkKey(Buffer.alloc(32, 2)),
        contentId: 'bench',
        input: values.input,
        output: out,
        bits: '01'.repeat(20),
        backend,
      }),
    );
    full = {
      seconds: (performance.now() - t) / 1000,
      frames: result.frames,
      nodePeakMiB: Math.max(before, peakRssMiB()),
      children: [...children.values()],
    };
  } finally {
    await backend.close();
    fs.rmSync(out, { force: true });
  }
}

const rows: Array<{ backend: string; fps: number; runs: number[]; decodeFps: number; peakRssMiB: number }> = [];
for (const name of values.backends.split(',')) {
  const backend = await makeBackend(name.trim());
  progress(`${backend.name}: ${runs} runs of ${frames} frames of ${width}x${height}`);
  try {
    await embed(backend); // warm-up: workers, JIT
    const fps: number[] = [];
    const decodeFps: number[] = [];
    for (let i = 0; i < runs; i++) {
      decodeFps.push(await decodeOnly());
      fps.push(await embed(backend));
    }
    rows.push({
      backend: backend.name,
      fps: median(fps),
      runs: fps,
      decodeFps: median(decodeFps),
      peakRssMiB: peakRssMiB(),
    });
  } finally {
    await backend.close();
  }
}

if (values.json) {
  process.stdout.write(
    `${JSON.stringify({ input: values.input, width, height, frames, runs, cpus: os.availableParallelism(), rows, full }, null, 2)}\n`,
  );
} else {
  const table = new Table({
    head: ['backend', 'embed A+B frames/s (median)', 'runs', 'decode alone frames/s', 'vs 30 fps', 'peak RSS MiB'],
    style: { head: [], border: [] },
  });
  for (const r of rows)
    table.push([
      r.backend,
      r.fps.toFixed(2),
      r.runs.map((f) => f.toFixed(1)).join(' '),
      r.decodeFps.toFixed(1),
      `${((r.fps / 30) * 100).toFixed(0)}%`,
      r.peakRssMiB,
    ]);
  process.stdout.write(
    `Embedding both variants of ${width}x${height} (${values.input}), ${frames} frames per run after a warm-up, mark ${JSON.stringify(DEFAULT_VIDEO_MARK)}, ${os.availableParallelism()} CPUs\n${table.toString()}\n`,
  );
  if (full) {
    const total = full.nodePeakMiB + full.children.reduce((s, c) => s + c.peakMiB, 0);
    process.stdout.write(
      `Whole clip to MP4 (embedVideo, cpu pool, x264 CRF 18 fast): ${full.frames} frames in ${full.seconds.toFixed(1)} s = ${(full.frames / full.seconds).toFixed(1)} frames/s\n` +
        `Peak RSS: node ${full.nodePeakMiB} MiB + ${full.children.map((c) => `${c.name} ${c.peakMiB} MiB`).join(' + ')} = ${total} MiB (each process's own peak, summed)\n`,
    );
  }
}
