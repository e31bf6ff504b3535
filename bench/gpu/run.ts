// GPU watermarking: `npm run bench:gpu -- [--frames 480] [--runs 3] [--sizes 1920x1080,3840x2160]
//   [--clip-seconds 30] [--window RUNS] [--json] [--out FILE]`
//
// On a machine with an NVIDIA GPU (bench/gpu/device.sh runs it there from a carried payload, with no
// network and no npm install), prints:
//   - the device, and whether the CUDA backend marks as the CPU does on a 1080p frame (coefficients,
//     pixels of A and B, PSNR, and the mark read back across: GPU-marked read by the CPU and back);
//   - frames marked per second (A and B) on the GPU and on the CPU pool of this machine's cores, per size;
//   - ingest's media work on a clip it makes, through ingest's own packaging code: watermarked (one
//     decode, the mark, two x264 encodes, the detection reference and stills) on the GPU and on the
//     CPU pool, against the plain packaging with the same ffmpeg.
// Medians of --runs, the CPU figures measured in the same run. DRM_CUDA_LIBRARY=<shim.so> runs it on
// the CPU shim (a smoke test of the script, not a measurement).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { DtcwtBackend } from '../../gpu/backend.js';
import { createCpuDirectBackend } from '../../gpu/cpu-direct.js';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import { CudaBackend } from '../../gpu/cuda/backend.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import type { StagePart } from '../../src/domain/ingest/stage-times.js';
import { median } from '../stats.js';
import { agreement } from './agreement.js';
import { makeClip, markedTranscode, plainTranscode } from './pipeline.js';
import { printTables } from './tables.js';
import { type MarkRate, markFps, ringOfFrames } from './throughput.js';

const { values } = parseArgs({
  options: {
    frames: { type: 'string', default: '480' },
    runs: { type: 'string', default: '3' },
    sizes: { type: 'string', default: '1920x1080,3840x2160' },
    'clip-seconds': { type: 'string', default: '30' },
    'ingest-runs': { type: 'string', default: '2' },
    deadline: { type: 'string' },
    window: { type: 'string' },
    'check-size': { type: 'string', default: '1920x1080' },
    json: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const runs = Math.max(1, Number(values.runs));
const frames = Number(values.frames);
/** Runs of two frames in flight: as embedding chooses them (embed.ts), unless --window says. */
const windowFor = (backend: DtcwtBackend, w: number, h: number) =>
  values.window
    ? Number(values.window)
    : Math.max(2, os.availableParallelism() * 2, Math.ceil((backend.framesInFlight?.(w, h) ?? 0) / 2));
let step = 'start';
// Timed, so that the GPU's own samples (device.sh writes nvidia-smi's beside the report) line up with the parts.
const log = (m: string) => {
  step = m;
  process.stderr.write(`bench:gpu: ${new Date().toISOString()} ${m}\n`);
};
// On a lent machine whose time is counted: stop with what was measured, and say where it stopped.
if (values.deadline)
  setTimeout(() => {
    process.stderr.write(`bench:gpu: deadline of ${values.deadline} s reached after: ${step}\n`);
    save();
    process.exit(3);
  }, Number(values.deadline) * 1000).unref();
const warnings: string[] = [];
const cuda = await CudaBackend.open({ onWarning: (m) => warnings.push(m) });
const cpu = createCpuPoolBackend();
log(`${cuda.name}; batches awaited ${cuda.waits}; CPU pool ${cpu.name}`);

const report: Record<string, unknown> = {
  device: cuda.device,
  cpu: `${os.cpus()[0]?.model} x${os.availableParallelism()}`,
};
const direct = createCpuDirectBackend();
const [checkWidth, checkHeight] = (values['check-size'] as string).split('x').map(Number) as [number, number];
/** The report so far, written after each part, so that a run cut short still leaves its figures. */
const save = () => values.out && fs.writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
report.agreement = await agreement(cuda, direct, checkWidth, checkHeight);
save();
log(`agreement: ${JSON.stringify(report.agreement)}`);

const fps: Record<string, unknown>[] = [];
report.fps = fps;
for (const size of (values.sizes as string).split(',')) {
  const [width, height] = size.split('x').map(Number) as [number, number];
  const n = height > 1080 ? Math.max(64, frames / 4) : frames;
  const g: MarkRate[] = [];
  const c: MarkRate[] = [];
  const [gw, cw] = [windowFor(cuda, width, height), windowFor(cpu, width, height)];
  const ring = ringOfFrames(cuda, width, height, 2 * Math.max(gw, cw) + 2);
  log(`${size}: frames made, marking`);
  await markFps(cuda, width, height, 2 * gw, gw, ring); // warm-up: the driver's JIT, the first arenas
  for (let r = 0; r < runs; r++) {
    g.push(await markFps(cuda, width, height, n, gw, ring));
    c.push(await markFps(cpu, width, height, Math.max(32, n / 8), cw, ring));
    const busy = g.at(-1)?.mainThreadBusy;
    const mainThread = busy === undefined ? '' : ` (main thread busy ${(busy * 100).toFixed(0)}%)`;
    log(`${size} run ${r + 1}: cuda ${g.at(-1)?.fps.toFixed(0)} fps${mainThread}, cpu ${c.at(-1)?.fps.toFixed(1)} fps`);
  }
  // Whether the frames were pinned: where the driver refuses, the figures are the staging path's.
  const pinning = { pinnedFrames: cuda.pinning.count, ...(cuda.pinning.refusal && { refusal: cuda.pinning.refusal }) };
  log(`${size}: ${JSON.stringify(pinning)}`);
  await ring.pool.close();
  const busy = g.flatMap((m) => m.mainThreadBusy ?? []);
  fps.push({
    size,
    cudaFps: median(g.map((m) => m.fps)),
    cpuFps: median(c.map((m) => m.fps)),
    ...(busy.length > 0 && { cudaMainThreadBusy: median(busy) }),
    pinning,
    runsCuda: g,
    runsCpu: c,
  });
  save();
}
report.fps = fps;

const bins = mediaBinaries();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-bench-gpu-'));
log('making the ingest clip');
const clip = await makeClip(bins, work, 1920, 1080, Number(values['clip-seconds']));
const times = { plain: [] as number[], cuda: [] as number[], cpu: [] as number[] };
const parts: Record<string, StagePart[] | undefined> = {};
for (let r = 0; r < Number(values['ingest-runs']); r++) {
  const dir = (name: string) => fs.mkdtempSync(path.join(work, `${name}-`));
  const ran = {
    plain: await plainTranscode(bins, clip, dir('plain')),
    cuda: await markedTranscode(bins, clip, dir('cuda'), cuda),
    ...(r === 0 && { cpu: await markedTranscode(bins, clip, dir('cpu'), cpu) }),
  };
  for (const [way, packaged] of Object.entries(ran)) {
    times[way as keyof typeof times].push(packaged.seconds);
    if (r === 0) parts[way] = packaged.parts; // where the CPU went, from the first run
  }
  log(`ingest run ${r + 1}: plain ${ran.plain.seconds.toFixed(1)} s, cuda ${ran.cuda.seconds.toFixed(1)} s`);
  if (ran.cpu) log(`ingest, CPU pool: ${ran.cpu.seconds.toFixed(1)} s`);
  report.ingest = {
    clip: `${clip.width}x${clip.height} ${clip.seconds} s`,
    plainSeconds: median(times.plain),
    cudaSeconds: median(times.cuda),
    cpuSeconds: median(times.cpu),
    runs: times,
    cpuParts: parts,
  };
  save(); // after each run: a deadline keeps the runs that finished
}
report.warnings = warnings;
fs.rmSync(work, { recursive: true, force: true });
await Promise.all([cuda.close(), cpu.close(), direct.close()]);

save();
if (values.json) console.log(JSON.stringify(report, null, 2));
else printTables(report, values['check-size'] as string);
