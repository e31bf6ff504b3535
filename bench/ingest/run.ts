// Ingest speed: `npm run bench:ingest -- [--input FILE] [--runs 3] [--cases plain,watermarked,floor] [--json]`.
//
// Times, on one clip (default the corpus's 60-s 1080p; make it with bench/corpus/make-corpus.sh):
//   baseline     ffmpeg's own AES-128 HLS transcode with the encoder settings ingest uses
//                (x264 CRF 18 fast, keyframes on the 10-s grid, AAC), one process;
//   plain        `drm ingest` without a watermark (the same transcode, thumbnail, preview, publish);
//   watermarked  `drm ingest --watermark` (one decode, the mark, two x264 encodes: A and B);
//   floor        (only when --cases names it) one ffmpeg that decodes once and encodes twice as the baseline does:
//                what any watermarked ingest with two x264 encodes costs before its mark.
// Runs are interleaved (baseline, plain, watermarked, baseline, …) so that a slow spell of the
// machine falls on all of them; each figure is the median of --runs, and the ratios divide medians
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
    cases: { type: 'string', default: 'plain,watermarked' },
  },
});
corpusFile(values.input);
const CASES = ['baseline', 'plain', 'watermarked', 'floor'];
const wanted = new Set(['baseline', ...values.cases.split(',').map((c) => c.trim())]);
const unknown = [...wanted].filter((k) => !CASES.includes(k));
if (unknown.length > 0) {
  process.stderr.write(`bench: --cases: no case ${unknown.join(', ')} (${CASES.join(', ')})\n`);
  process.exit(2);
}
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

/** ffmpeg's own x264 HLS output of the stream labelled `video`, with the settings ingest uses, into `out`. */
function hlsOutput(video: string, out: string, keyInfo: string): string[] {
  const audio = info.audio ? ['-map', '0:a:0', '-c:a', 'aac', '-b:a', '160k'] : [];
  return [
    '-map',
    video,
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
  ];
}

/** One ffmpeg: the source decoded, then one HLS output per label in `videos` (after `filters`). */
async function ffmpegHls(what: string, filters: string[], videos: string[]): Promise<void> {
  const outs = videos.map(() => fs.mkdtempSync(path.join(work, 'ffmpeg-')));
  const outputs = outs.flatMap((out, k) => hlsOutput(videos[k] as string, out, writeKeyInfo(out, Buffer.alloc(16, 7))));
  await transcode(bins, ['-i', values.input, ...filters, ...outputs], { what });
  for (const out of outs) fs.rmSync(out, { recursive: true, force: true });
}

const baseline = () => ffmpegHls('the baseline HLS transcode', [], ['0:v:0']);
// What a watermarked ingest cannot go below with two x264 encodes: both from one decode, no mark.
const floor = () => ffmpegHls('the two-encode floor', ['-filter_complex', '[0:v:0]split=2[a][b]'], ['[a]', '[b]']);

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

const allCases = [
  { key: 'baseline', name: 'baseline: ffmpeg HLS transcode (x264 CRF 18 fast, AES-128)', run: baseline },
  { key: 'plain', name: 'drm ingest (plain)', run: ingest(false), goal: 1.05 },
  { key: 'watermarked', name: 'drm ingest --watermark (A and B)', run: ingest(true), goal: 2.0 },
  { key: 'floor', name: 'floor: one ffmpeg, one decode, two x264 encodes', run: floor },
];
const cases = allCases.filter((c) => wanted.has(c.key));
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
  for (const [i, r] of rows.entries()) {
    const goal = cases[i]?.goal;
    table.push([
      r.case,
      r.median.toFixed(1),
      r.runs.map((x) => x.toFixed(1)).join(' '),
      `${r.ratio.toFixed(2)}×`,
      goal ? `≤ ${goal.toFixed(2)}×: ${r.ratio <= goal ? 'PASS' : 'FAIL'}` : '',
    ]);
  }
  process.stdout.write(`${table.toString()}\n`);
  for (const [kind, of] of Object.entries(stages)) {
    if (of.length > 0) process.stdout.write(`${stageTable(`${kind} ingest: stage (part)`, medianStages(of))}\n`);
  }
}
