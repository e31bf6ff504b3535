// Analysis speed: `npm run bench:analyze -- [--input FILE] [--minutes 10] [--runs 3] [--work DIR] [--json]` (--runs 0 with --work: prepare only).
//
// A 10-minute 1080p leak, made honestly: the corpus's 60-s 1080p clip is played
// over and over to --minutes as the film (each pass flipped or zoomed its own way, so the film never
// repeats itself), and one viewer's marked copy of that whole film is the leak, so the
// detector aligns and scores every one of its segments (60 for 10 minutes), not one minute seen
// ten times. Ingesting a 10-minute 1080p film with both variants would take half an hour here, so
// the bench ingests the clip (for a content row, its key and a viewer's session), then writes the
// viewer's copy of the long film in one pass with embedVideo (the same mark, the same segments;
// x264 superfast CRF 20 for the copy) and, from the same decode, the film's detection reference in
// place of the clip's. Then, interleaved per run: ffmpeg decoding the leak to nothing (the
// baseline), and the whole analysis of the leak (`analyzeLeak`: decode, alignment, scoring,
// matching). Prints medians and the ratio. Target: ≤ 1.5× the decode.
import Table from 'cli-table3';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import { resolveConfig } from '../../src/config.js';
import { createContext } from '../../src/create-context.js';
import type { ContentRow } from '../../src/db/repos/index.js';
import { analyzeLeak } from '../../src/domain/forensics/analyze.js';
import { ingestContent } from '../../src/domain/ingest/ingest.js';
import { thumbsBeside, VIDEO_REFERENCE, writeVideoReferenceThumbs } from '../../src/watermark/video/reference.js';
import { embedVideo } from '../../src/watermark/video/embed.js';
import { createLogger } from '../../src/log.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { probeMedia } from '../../src/media/probe.js';
import { filmArgs } from '../film.js';
import { median } from '../stats.js';
import { createViewerSession } from './viewer.js';
import { corpusFile } from '../corpus.js';
import { FIXED_RULE } from '../../src/watermark/segment-rule.js';

const { values } = parseArgs({
  options: {
    input: { type: 'string', default: '/tmp/corpus/photo-1080p-60s.mp4' },
    minutes: { type: 'string', default: '10' },
    runs: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
    /** keep the prepared leak in DIR and reuse it on the next run with the same --work (setup takes minutes) */
    work: { type: 'string' },
  },
});
corpusFile(values.input);
// --runs 0 with --work only prepares the leak (setup and timed runs can then go at different times).
const runs = Math.max(values.work ? 0 : 1, Number(values.runs));
const minutes = Number(values.minutes);
const bins = mediaBinaries();
const work = values.work ? path.resolve(values.work) : fs.mkdtempSync(path.join(os.tmpdir(), 'drm-bench-analyze-'));
fs.mkdirSync(work, { recursive: true });
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
const ctx = await createContext(resolveConfig({ dataDir: path.join(work, 'data'), logLevel: 'silent' }, {}), {
  log: createLogger('silent'),
});
const backend = createCpuPoolBackend();

const leak = path.join(work, 'leak.mp4');
const readyFile = path.join(work, 'ready.json');
const setup = { input: path.resolve(values.input), minutes };
const ready = fs.existsSync(readyFile)
  ? (JSON.parse(fs.readFileSync(readyFile, 'utf8')) as typeof setup & { contentId: string })
  : undefined;
if (ready && (ready.input !== setup.input || ready.minutes !== minutes))
  throw new Error(`${work} holds a leak of ${ready.minutes} min of ${ready.input}: use another --work`);
const info = await probeMedia(bins, values.input);
if (!info.video) throw new Error(`${values.input} has no video`);
const content = ready ? ((await ctx.repos.content.find(ready.contentId)) as ContentRow) : await prepare();
if (ready) {
  log(`reusing the ${minutes}-min leak in ${work}`);
  const reference = ctx.storage.file(content.storagePath as string, VIDEO_REFERENCE);
  if (!fs.existsSync(thumbsBeside(reference))) {
    log('writing the reference thumbnails ingest now keeps (this work folder is older)');
    await writeVideoReferenceThumbs(bins, reference);
  }
}

/** The content row, its viewer and the leak: see the top of this file. */
async function prepare(): Promise<ContentRow> {
  log(`ingesting ${path.basename(values.input)} with its watermark`);
  const ingested = await ingestContent(
    ctx,
    { input: values.input, title: 'bench', type: 'video', watermark: true },
    { backend: async () => backend },
  );
  const content = (await ctx.repos.content.find(ingested.contentId)) as ContentRow;
  // One viewer, so that matching has a candidate; its bits pick the variant of each segment of its copy.
  const viewer = await createViewerSession(ctx, content);
  const film = path.join(work, 'film.mp4');
  log(`making a ${minutes}-min film of ${path.basename(values.input)}, each pass of it seen differently`);
  ff(...filmArgs(values.input, info, minutes * 60), film);
  const reference = ctx.storage.file(content.storagePath as string, VIDEO_REFERENCE);
  log(`writing the viewer's marked copy of the ${minutes}-min film (the leak) and the film's reference`);
  let last = 0;
  await embedVideo({
    rule: FIXED_RULE,
    bins,
    key: ctx.keys.watermark,
    contentId: content.id,
    input: film,
    output: leak,
    bits: viewer.binaryId,
    backend,
    reference,
    preset: 'superfast',
    crf: 20,
    onProgress: (done, total) => {
      if (done - last < total / 20) return;
      last = done;
      log(`  ${Math.round((100 * done) / total)}%`);
    },
  });
  fs.rmSync(film, { force: true });
  fs.writeFileSync(readyFile, JSON.stringify({ ...setup, contentId: content.id }));
  return content;
}

async function decode(): Promise<void> {
  ff('-i', leak, '-f', 'null', '-');
}
async function analyze(): Promise<string> {
  // Where the time goes: each stage's start, logged.
  const started = performance.now();
  let stage = '';
  const onProgress = (s: string, done: number, total: number) => {
    const name = s === 'align' ? `align step ${done + 1}` : s;
    if (name === stage || done >= total) return;
    stage = name;
    log(`  ${((performance.now() - started) / 1000).toFixed(1)} s: ${name}`);
  };
  const report = await analyzeLeak(ctx, leak, content, { backend: async () => backend, onProgress });
  const zs = report.detection.segments.map((g) => Math.abs(g.z));
  log(`  alignment ${JSON.stringify(report.detection.alignment)}`);
  return `${report.classification}, ${zs.length} segments, |z| ${Math.min(...zs).toFixed(1)}–${Math.max(...zs).toFixed(1)}`;
}

const times = { decode: [] as number[], analyze: [] as number[] };
let outcome = '';
for (let r = 0; r < runs; r++) {
  for (const [name, run] of [
    ['decode', decode],
    ['analyze', analyze],
  ] as const) {
    const t = performance.now();
    const out = await run();
    if (typeof out === 'string') outcome = out;
    const s = (performance.now() - t) / 1000;
    times[name].push(s);
    log(`run ${r + 1}/${runs}: ${name}: ${s.toFixed(1)} s${typeof out === 'string' ? ` (${out})` : ''}`);
  }
}
await backend.close();
await ctx.db.close();
if (!values.work) fs.rmSync(work, { recursive: true, force: true });
if (runs === 0) {
  log(`prepared in ${work}: time it with --work ${values.work} --runs N`);
  process.exit(0);
}

const decodeS = median(times.decode);
const analyzeS = median(times.analyze);
if (values.json) {
  process.stdout.write(
    `${JSON.stringify({ input: values.input, minutes, cpus: os.availableParallelism(), times, decode: decodeS, analyze: analyzeS, ratio: analyzeS / decodeS, outcome }, null, 2)}\n`,
  );
} else {
  process.stdout.write(
    `Analysis of a ${minutes}-min 1080p leak (a viewer's copy of ${path.basename(values.input)} played ${Math.ceil((minutes * 60) / info.duration)} times, each pass flipped or zoomed), ${runs} interleaved run(s), ${os.availableParallelism()} CPUs (${outcome})\n`,
  );
  const table = new Table({
    head: ['what', 'seconds (median)', 'runs', 'vs decode', 'target'],
    style: { head: [], border: [] },
  });
  table.push([
    'ffmpeg decoding the leak (-f null)',
    decodeS.toFixed(1),
    times.decode.map((x) => x.toFixed(1)).join(' '),
    '1.00×',
    '',
  ]);
  table.push([
    'drm analysis (align, score, match)',
    analyzeS.toFixed(1),
    times.analyze.map((x) => x.toFixed(1)).join(' '),
    `${(analyzeS / decodeS).toFixed(2)}×`,
    '≤ 1.5×',
  ]);
  process.stdout.write(`${table.toString()}\n`);
}
