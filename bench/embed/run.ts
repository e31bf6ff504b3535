// Embedding speed: `node --import tsx bench/embed/run.ts [--input FILE] [--frames 60] [--backends cpu,pool,tfjs] [--json]`.
//
// Decodes the clip's luma through ffmpeg (src/media/decode.ts) and, per backend, computes the
// mark of every frame and writes both variants A and B (src/watermark/video-mark.ts), without
// encoding. Beside each figure: decoding alone, measured in the same run, so the embedding cost
// reads apart from ffmpeg's. Frames are kept in flight in a small window so a pool can use every
// core. Peak RSS is the process maximum so far. Prints numbers; it is not a test.
import Table from 'cli-table3';
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { DtcwtBackend } from '../../gpu/backend.js';
import { createCpuDirectBackend } from '../../gpu/backend.js';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { lumaFrames } from '../../src/media/decode.js';
import { probeMedia } from '../../src/media/probe.js';
import { watermarkKey } from '../../src/watermark/keyed-random.js';
import { halfSize } from '../../src/watermark/resample.js';
import { applyDelta, DEFAULT_VIDEO_MARK, frameDelta, markedCount, segmentPattern } from '../../src/watermark/video-mark.js';

const { values } = parseArgs({
  options: {
    input: { type: 'string', default: '/tmp/corpus/photo-1080p-60s.mp4' },
    frames: { type: 'string', default: '60' },
    backends: { type: 'string', default: 'cpu,pool' },
    window: { type: 'string', default: String(Math.max(2, os.availableParallelism() * 2)) },
    json: { type: 'boolean', default: false },
  },
});
const frames = Number(values.frames);
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
  if (name === 'tfjs') return (await import('../../gpu/tfjs/backend.js')).createTfjsBackend();
  throw new Error(`unknown backend ${name} (cpu, pool, tfjs)`);
}

async function decodeOnly(): Promise<number> {
  const t = performance.now();
  let n = 0;
  for await (const _ of lumaFrames(bins, values.input, { width, height })) if (++n >= frames) break;
  return n / ((performance.now() - t) / 1000);
}

async function embed(backend: DtcwtBackend): Promise<number> {
  const h = halfSize(width, height);
  const zero = await backend.forward(new Float32Array(h.width * h.height), h.height, h.width, DEFAULT_VIDEO_MARK.levels);
  const pattern = segmentPattern(watermarkKey(Buffer.alloc(32, 1)), 'bench', 0, markedCount(zero, DEFAULT_VIDEO_MARK));
  const inFlight = new Set<Promise<void>>();
  const t = performance.now();
  let n = 0;
  for await (const luma of lumaFrames(bins, values.input, { width, height })) {
    const job = frameDelta(backend, luma, width, height, pattern).then((d) => {
      applyDelta(luma, d, 'A');
      applyDelta(luma, d, 'B');
    });
    inFlight.add(job);
    void job.finally(() => inFlight.delete(job));
    if (inFlight.size >= windowSize) await Promise.race(inFlight);
    if (++n >= frames) break;
  }
  await Promise.all(inFlight);
  return n / ((performance.now() - t) / 1000);
}

const rows: Array<{ backend: string; fps: number; decodeFps: number; peakRssMiB: number }> = [];
for (const name of values.backends.split(',')) {
  const decodeFps = await decodeOnly();
  const backend = await makeBackend(name.trim());
  progress(`${backend.name}: ${frames} frames of ${width}x${height}`);
  try {
    await embed(backend); // warm-up: workers, JIT
    rows.push({ backend: backend.name, fps: await embed(backend), decodeFps, peakRssMiB: peakRssMiB() });
  } finally {
    await backend.close();
  }
}

if (values.json) {
  process.stdout.write(`${JSON.stringify({ input: values.input, width, height, frames, cpus: os.availableParallelism(), rows }, null, 2)}\n`);
} else {
  const table = new Table({ head: ['backend', 'embed A+B frames/s', 'decode alone frames/s', 'vs 30 fps', 'peak RSS MiB'], style: { head: [], border: [] } });
  for (const r of rows) table.push([r.backend, r.fps.toFixed(2), r.decodeFps.toFixed(1), `${((r.fps / 30) * 100).toFixed(0)}%`, r.peakRssMiB]);
  process.stdout.write(
    `Embedding both variants of ${width}x${height} (${values.input}), ${frames} frames after a warm-up, mark ${JSON.stringify(DEFAULT_VIDEO_MARK)}, ${os.availableParallelism()} CPUs\n${table.toString()}\n`,
  );
}
