// Ingest speed: `npm run bench:ingest -- [--input FILE] [--runs 3] [--json]`.
//
// Times, on one clip (default the corpus's 60-s 1080p; make it with ../shared/media/make-corpus.sh):
//   baseline     ffmpeg's own AES-128 HLS transcode with the encoder settings ingest uses
//                (x264 CRF 18 fast, keyframes on the 10-s grid, AAC), one process;
//   plain        `drm ingest` without a watermark (the same transcode, thumbnail, preview, publish);
//   watermarked  `drm ingest --watermark` (one decode, the mark, two x264 encodes: A and B).
// Runs are interleaved (baseline, plain, watermarked, baseline, …) so that a slow spell of the
// machine falls on all three; each figure is the median of --runs, and the ratios divide medians
// measured in the same run. Goals: plain ≤ 1.05×, watermarked ≤ 2.0×. Then the median of each
// stage of drm's ingests, and of each part of their packaging's CPU (src/domain/ingest/stage-times.ts).
// Prints numbers.
import Table from 'cli-table3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { median } from '../stats.js';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import { resolveConfig } from '../../src/config.js';
import { createContext } from '../../src/create-context.js';
import { ingestContent } from '../../src/domain/ingest/ingest.js';
import { createLogger } from '../../src/log.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { hlsMuxArgs, keyframeGridArgs, playlistIn, writeKeyInfo } from '../../src/media/hls.js';
import { probeMedia } from '../../src/media/probe.js';
import { transcode } from '../../src/media/transcode.js';
import { corpusFile } from '../corpus.js';
import type { IngestStage } from '../../src/domain/ingest/stage-times.js';
import { medianStages, stageTable } from './stages.js';

const { values } = parseArgs({
  options: {
    input: { type: 'string', default: '/tmp/corpus/photo-1080p-60s.mp4' },
    runs: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
  },
});
corpusFile(values.input);
const runs = Math.max(1, Number(values.runs));
const bins = mediaBinaries();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-bench-ingest-'));
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const info = await probeMedia(bins, values.input);
if (!info.video) throw new Error(`${values.input} has no video`);
const ctx = await createContext(resolveConfig({ dataDir: path.join(work, 'data'), logLevel: 'silent' }, {}), {
  log: createLogger('silent'),
});
const backend = createCpuPoolBackend();

async function baseline(): Promise<void> {
  const out = fs.mkdtempSync(path.join(work, 'ffmpeg-'));
  const keyInfo = writeKeyInfo(out, Buffer.alloc(16, 7));
  const audio = info.audio ? ['-map', '0:a:0', '-c:a', 'aac', '-b:a', '160k'] : [];
  await transcode(
    bins,
    [
      '-i',
      values.input,
      '-map',
      '0:v:0',
      ...audio,
      '-c:v',
      'libx264',
      '-crf',
      '18',
      '-preset',
      'fast',
      '-pix_fmt',
      'yuv420p',
      ...keyframeGridArgs(),
      ...hlsMuxArgs(out, keyInfo),
      playlistIn(out),
    ],
    { what: 'the baseline HLS transcode' },
  );
  fs.rmSync(out, { recursive: true, force: true });
}

const stages: Record<'plain' | 'watermarked', IngestStage[][]> = { plain: [], watermarked: [] };
const ingest = (watermark: boolean) => async () => {
  const r = await ingestContent(
    ctx,
    { input: values.input, title: 'bench', type: 'video', watermark },
    { backend: async () => backend },
  );
  stages[watermark ? 'watermarked' : 'plain'].push(r.stages);
  fs.rmSync(path.join(work, 'data', 'content'), { recursive: true, force: true });
};

const cases = [
  { name: 'baseline: ffmpeg HLS transcode (x264 CRF 18 fast, AES-128)', run: baseline },
  { name: 'drm ingest (plain)', run: ingest(false) },
  { name: 'drm ingest --watermark (A and B)', run: ingest(true) },
];
const times = cases.map(() => [] as number[]);
for (let r = 0; r < runs; r++) {
  for (const [i, c] of cases.entries()) {
    const t = performance.now();
    await c.run();
    const s = (performance.now() - t) / 1000;
    times[i]?.push(s);
    log(`run ${r + 1}/${runs}: ${c.name}: ${s.toFixed(1)} s`);
  }
}
await backend.close();
await ctx.db.close();
fs.rmSync(work, { recursive: true, force: true });

const base = median(times[0] as number[]);
const rows = cases.map((c, i) => ({
  case: c.name,
  runs: times[i] as number[],
  median: median(times[i] as number[]),
  ratio: median(times[i] as number[]) / base,
}));
const { width, height } = info.video;
if (values.json) {
  process.stdout.write(
    `${JSON.stringify(
      {
        input: values.input,
        width,
        height,
        duration: info.duration,
        cpus: os.availableParallelism(),
        rows,
        stages: { plain: medianStages(stages.plain), watermarked: medianStages(stages.watermarked) },
      },
      null,
      2,
    )}\n`,
  );
} else {
  process.stdout.write(
    `Ingest of ${path.basename(values.input)} (${width}x${height}, ${info.duration.toFixed(1)} s), ${runs} interleaved run(s), ${os.availableParallelism()} CPUs\n`,
  );
  const table = new Table({
    head: ['what', 'seconds (median)', 'runs', 'vs baseline', 'goal'],
    style: { head: [], border: [] },
  });
  const goals = [undefined, 1.05, 2.0];
  for (const [i, r] of rows.entries()) {
    const goal = goals[i];
    table.push([
      r.case,
      r.median.toFixed(1),
      r.runs.map((x) => x.toFixed(1)).join(' '),
      `${r.ratio.toFixed(2)}×`,
      goal ? `≤ ${goal.toFixed(2)}×: ${r.ratio <= goal ? 'PASS' : 'FAIL'}` : '',
    ]);
  }
  process.stdout.write(`${table.toString()}\n`);
  process.stdout.write(`${stageTable('plain ingest: stage (part)', medianStages(stages.plain))}\n`);
  process.stdout.write(`${stageTable('watermarked ingest: stage (part)', medianStages(stages.watermarked))}\n`);
}
