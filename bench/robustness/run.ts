// Robustness of the watermark: `npm run bench:robustness -- [--corpus DIR] [--clips a.mp4,b.wav] [--attacks crf28,trim] [--json]`.
//
// For a random 40-bit viewer id and a random secret: marks each corpus clip (make the corpus with
// bench/corpus/make-corpus.sh DIR), attacks the marked copy with ffmpeg, detects with the
// original at hand, and prints per attack the share of segments that read the viewer's bit, the
// smallest |z| among them, and the largest |z| on unmarked controls (the original re-encoded, and
// another clip). For video it also prints how far the marked copy is from the unmarked encode made
// with the same x264 settings (PSNR and SSIM of the luma, per variant, by ffmpeg's psnr and ssim
// filters), beside that encode's own distance from the source. Prints numbers; it is not a test.
import Table from 'cli-table3';
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import { DrmError } from '../../src/errors.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { probeMedia } from '../../src/media/probe.js';
import { watermarkKey } from '../../src/watermark/keyed-random.js';
import { detectMusic } from '../../src/watermark/music/detect.js';
import { embedMusic } from '../../src/watermark/music/embed.js';
import type { Detection } from '../../src/watermark/segments.js';
import { detectVideo } from '../../src/watermark/video/detect.js';
import { embedVideo } from '../../src/watermark/video/embed.js';
import { FIXED_RULE } from '../../src/watermark/segment-rule.js';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string', default: '/tmp/corpus' },
    clips: { type: 'string', default: 'photo-720p-30s.mp4,photo-1080p-60s.mp4,music-60s.wav' },
    attacks: { type: 'string' },
    'frames-per-segment': { type: 'string', default: '20' },
    json: { type: 'boolean', default: false },
  },
});
const bins = mediaBinaries();
const key = watermarkKey(randomBytes(32));
const contentId = randomUUID();
const bits = Array.from({ length: 40 }, () => String(randomInt(2))).join('');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-robustness-'));
const backend = createCpuPoolBackend();
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
const x264 = (crf: number) => ['-c:v', 'libx264', '-crf', String(crf), '-preset', 'fast', '-pix_fmt', 'yuv420p', '-an'];
/** The embedder's x264 quality (embedVideo's default, stated here so the unmarked encode matches it). */
const EMBED_CRF = 18;
const trimAt = Math.round((0.5 + Math.random() * 9) * 100) / 100;

interface Attack {
  name: string;
  args: (w: number, h: number) => string[];
  /** input options (before -i) */
  pre?: string[];
  ext: string;
}
const VIDEO_ATTACKS: Attack[] = [
  { name: 'x264 CRF 23', args: () => x264(23), ext: 'mp4' },
  { name: 'x264 CRF 28', args: () => x264(28), ext: 'mp4' },
  { name: 'x264 CRF 35', args: () => x264(35), ext: 'mp4' },
  {
    name: '0.5x downscale + CRF 28',
    args: () => ['-vf', 'scale=trunc(iw/4)*2:trunc(ih/4)*2', ...x264(28)],
    ext: 'mp4',
  },
  { name: 'to 480p (CRF 23)', args: () => ['-vf', 'scale=-2:480', ...x264(23)], ext: 'mp4' },
  {
    name: '5% crop + rescale',
    args: (w, h) => ['-vf', `crop=trunc(iw*0.95/2)*2:trunc(ih*0.95/2)*2,scale=${w}:${h}`, ...x264(23)],
    ext: 'mp4',
  },
  { name: `trim from ${trimAt} s`, pre: ['-ss', String(trimAt)], args: () => x264(23), ext: 'mp4' },
  { name: '30 -> 25 fps', args: () => ['-vf', 'fps=25', ...x264(23)], ext: 'mp4' },
  { name: 'gamma 1.2', args: () => ['-vf', 'eq=gamma=1.2', ...x264(23)], ext: 'mp4' },
  { name: 'gaussian noise', args: () => ['-vf', 'noise=alls=12:allf=t', ...x264(23)], ext: 'mp4' },
];
const MUSIC_ATTACKS: Attack[] = [
  { name: 'MP3 128 kb/s', args: () => ['-c:a', 'libmp3lame', '-b:a', '128k'], ext: 'mp3' },
  { name: 'AAC 64 kb/s', args: () => ['-c:a', 'aac', '-b:a', '64k'], ext: 'm4a' },
  { name: 'resample 22.05 kHz', args: () => ['-ar', '22050', '-c:a', 'aac', '-b:a', '192k'], ext: 'm4a' },
  { name: 'mono downmix', args: () => ['-ac', '1', '-c:a', 'aac', '-b:a', '192k'], ext: 'm4a' },
  {
    name: `trim from ${trimAt} s`,
    pre: ['-ss', String(trimAt)],
    args: () => ['-c:a', 'aac', '-b:a', '128k'],
    ext: 'm4a',
  },
];
const wanted = values.attacks?.split(',').map((s) => s.trim().toLowerCase());
const selected = (list: Attack[]) =>
  wanted ? list.filter((a) => wanted.some((w) => a.name.toLowerCase().replace(/\s+/g, '').includes(w))) : list;

interface Row {
  clip: string;
  attack: string;
  right: number;
  segments: number;
  minZ: number | null;
  seconds: number;
}
const rows: Row[] = [];
const quality: Array<{
  clip: string;
  compared: string;
  frames: number;
  psnrY: number;
  ssimY: number;
  worstSegment: { segment: number; psnrY: number; ssimY: number };
}> = [];
type FrameDistance = { mse: number; ssim: number; segment: number };

/** Per frame, the luma's mean squared error and SSIM of `a` against `b` (ffmpeg's psnr and ssim filters), and its 10-s segment. */
function lumaDistance(a: string, b: string, fps: number): FrameDistance[] {
  const stats = path.join(work, 'stats.log');
  const read = (filter: string, field: RegExp) => {
    ff('-i', a, '-i', b, '-lavfi', `[0:v][1:v]${filter}=stats_file=${stats}`, '-f', 'null', '-');
    return fs
      .readFileSync(stats, 'utf8')
      .trim()
      .split('\n')
      .map((line) => Number(field.exec(line)?.[1]));
  };
  const mse = read('psnr', /mse_y:([\d.]+)/);
  const ssim = read('ssim', /\bY:([\d.]+)/);
  return mse.map((m, i) => ({
    mse: m,
    ssim: ssim[i] as number,
    segment: Math.floor(i / fps / FIXED_RULE.segmentSeconds),
  }));
}

const psnrOf = (frames: readonly FrameDistance[]) =>
  10 * Math.log10((255 * 255) / (frames.reduce((s, f) => s + f.mse, 0) / frames.length));
const ssimOf = (frames: readonly FrameDistance[]) => frames.reduce((s, f) => s + f.ssim, 0) / frames.length;

/** The figures over all the frames given, and over the worst of their 10-s segments (which a viewer's variant may be made of alone). */
function summarise(clip: string, compared: string, frames: FrameDistance[]) {
  if (frames.length === 0) return;
  const bySegment = new Map<number, FrameDistance[]>();
  for (const f of frames) bySegment.set(f.segment, [...(bySegment.get(f.segment) ?? []), f]);
  const segments = [...bySegment].map(([segment, fs]) => ({ segment, psnrY: psnrOf(fs), ssimY: ssimOf(fs) }));
  const worstSegment = segments.reduce((w, x) => (x.psnrY < w.psnrY ? x : w));
  const row = { clip, compared, frames: frames.length, psnrY: psnrOf(frames), ssimY: ssimOf(frames), worstSegment };
  quality.push(row);
  log(
    `${clip} ${compared}: PSNR-Y ${row.psnrY.toFixed(2)} dB, SSIM-Y ${row.ssimY.toFixed(4)} over ${row.frames} frames; worst segment ${worstSegment.segment}: ${worstSegment.psnrY.toFixed(2)} dB, ${worstSegment.ssimY.toFixed(4)}`,
  );
}

/**
 * How visible the mark is, two ways. At the embedder's CRF 18, each variant against the unmarked
 * encode with the same settings, beside the encoder's own distance from the source: any change to
 * the input, however small, makes x264 decide differently, so this figure is the encoder's floor
 * (printed: a 2×2 dot in a corner scores the same).
 * Losslessly (x264 CRF 0, where the unmarked encode is the source itself), the mark alone: the
 * first 20 s marked A then B.
 */
async function imperceptibility(clip: string, input: string, marked: string, bits: string, fps: number) {
  const variantOf = (viewerBits: string) => (frame: number) =>
    viewerBits[Math.floor(frame / fps / FIXED_RULE.segmentSeconds) % 40] === '0' ? 'A' : 'B';
  const byVariant = (what: string, perFrame: FrameDistance[], variant: (frame: number) => string) => {
    for (const v of ['A', 'B'])
      summarise(
        clip,
        `${what.replace('%', v)}`,
        perFrame.filter((_, i) => variant(i) === v),
      );
  };
  const unmarked = path.join(work, 'unmarked-crf18.mp4');
  ff('-i', input, ...x264(EMBED_CRF), unmarked);
  byVariant(`CRF ${EMBED_CRF}: variant % vs the unmarked encode`, lumaDistance(marked, unmarked, fps), variantOf(bits));
  summarise(
    clip,
    `CRF ${EMBED_CRF}: the unmarked encode vs the source (the encoder alone)`,
    lumaDistance(unmarked, input, fps),
  );
  // The floor itself: four white pixels in a corner (about 68 dB from the source) move the encode
  // as far from the unmarked encode as the mark does, because x264's decisions cascade.
  const dotted = path.join(work, 'dotted-crf18.mp4');
  ff('-i', input, '-vf', 'drawbox=x=0:y=0:w=2:h=2:color=white:t=fill', ...x264(EMBED_CRF), dotted);
  summarise(
    clip,
    `CRF ${EMBED_CRF}: a 2x2 white dot in a corner vs the unmarked encode (the floor)`,
    lumaDistance(dotted, unmarked, fps),
  );

  // Lossless, so the excerpt is the source's frames (an MP4 keeps the frame rate exact, as MKV's 1-ms clock may not).
  const excerpt = path.join(work, 'excerpt.mp4');
  ff(
    '-i',
    input,
    '-t',
    '20',
    '-map',
    '0:v:0',
    '-c:v',
    'libx264',
    '-crf',
    '0',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    excerpt,
  );
  const lossless = path.join(work, 'marked-lossless.mp4');
  const alternate = '01'.repeat(20);
  await embedVideo({
    bins,
    key,
    contentId,
    rule: FIXED_RULE,
    input: excerpt,
    output: lossless,
    bits: alternate,
    backend,
    crf: 0,
  });
  byVariant(
    'lossless: variant % vs the source (the mark alone)',
    lumaDistance(lossless, excerpt, fps),
    variantOf(alternate),
  );
}
const controls: Array<{ clip: string; control: string; maxZ: number | null; note: string }> = [];

async function run(clip: string) {
  const input = path.join(values.corpus, clip);
  const info = await probeMedia(bins, input);
  const video = Boolean(info.video);
  const marked = path.join(work, `marked-${clip}${video ? '' : '.m4a'}`);
  const t0 = performance.now();
  log(`${clip}: marking for ${bits}`);
  if (video)
    await embedVideo({ bins, key, contentId, rule: FIXED_RULE, input, output: marked, bits, backend, crf: EMBED_CRF });
  else await embedMusic({ bins, key, contentId, rule: FIXED_RULE, input, output: marked, bits });
  log(`${clip}: marked in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  if (info.video) await imperceptibility(clip, input, marked, bits, info.video.fps);
  const detect = (leak: string): Promise<Detection> =>
    video
      ? detectVideo({
          rule: FIXED_RULE,
          bins,
          key,
          contentId,
          leak,
          original: input,
          backend,
          framesPerSegment: Number(values['frames-per-segment']),
        })
      : detectMusic({ bins, key, contentId, rule: FIXED_RULE, leak, original: input });
  for (const attack of selected(video ? VIDEO_ATTACKS : MUSIC_ATTACKS)) {
    const out = path.join(work, `attacked.${attack.ext}`);
    ff(...(attack.pre ?? []), '-i', marked, ...attack.args(info.video?.width ?? 0, info.video?.height ?? 0), out);
    const t = performance.now();
    const d = await detect(out);
    const right = d.segments.filter((s) => s.bit === bits[s.index % 40]);
    const row = {
      clip,
      attack: attack.name,
      right: right.length,
      segments: d.segments.length,
      minZ: right.length ? Math.min(...right.map((s) => Math.abs(s.z))) : null,
      seconds: (performance.now() - t) / 1000,
    };
    rows.push(row);
    log(
      `${clip} / ${attack.name}: ${row.right}/${row.segments} right, min |z| ${row.minZ?.toFixed(1)}; z ${d.segments.map((s) => s.z.toFixed(1)).join(' ')}`,
    );
  }
  const others = fs
    .readdirSync(values.corpus)
    .filter(
      (f) => f !== clip && (video ? /\.mp4$/ : /\.(wav|m4a|mp4)$/).test(f) && !f.startsWith(path.parse(clip).name),
    );
  // The original as it is would score exactly 0 (nothing differs); re-encoded it is a real control.
  const reencoded = path.join(work, `unmarked.${video ? 'mp4' : 'm4a'}`);
  ff('-i', input, ...(video ? x264(23) : ['-vn', '-c:a', 'aac', '-b:a', '128k']), reencoded);
  for (const [control, leak] of [
    [video ? 'the original, x264 CRF 23' : 'the original, AAC 128 kb/s', reencoded],
    ...others.slice(0, 1).map((f) => [`another clip (${f})`, path.join(values.corpus, f)]),
  ] as const) {
    try {
      const d = await detect(leak);
      controls.push({
        clip,
        control,
        maxZ: Math.max(0, ...d.segments.map((s) => Math.abs(s.z))),
        note: `${d.segments.length} segments, bits ${d.bits.replace(/\?/g, '').length} decided`,
      });
    } catch (err) {
      if (!(err instanceof DrmError)) throw err;
      controls.push({ clip, control, maxZ: null, note: `refused: ${err.message.slice(0, 70)}` });
    }
    log(`${clip} control ${control}: ${JSON.stringify(controls[controls.length - 1])}`);
  }
}

try {
  for (const clip of values.clips.split(',')) await run(clip.trim());
} finally {
  await backend.close();
  fs.rmSync(work, { recursive: true, force: true });
}

if (values.json) {
  process.stdout.write(`${JSON.stringify({ bits, rows, controls, quality }, null, 2)}\n`);
} else {
  const t = new Table({
    head: ['clip', 'attack', 'right bit', 'min |z| (right)', 'detect s'],
    style: { head: [], border: [] },
  });
  for (const r of rows)
    t.push([
      r.clip,
      r.attack,
      `${r.right}/${r.segments} (${Math.round((100 * r.right) / Math.max(1, r.segments))}%)`,
      r.minZ?.toFixed(1) ?? '-',
      r.seconds.toFixed(0),
    ]);
  process.stdout.write(`viewer id ${bits}\n${t.toString()}\n`);
  const c = new Table({ head: ['clip', 'unmarked control', 'max |z|', ''], style: { head: [], border: [] } });
  for (const r of controls) c.push([r.clip, r.control, r.maxZ?.toFixed(1) ?? '-', r.note]);
  process.stdout.write(`${c.toString()}\n`);
  const q = new Table({
    head: ['clip', 'luma compared', 'frames', 'PSNR-Y dB', 'SSIM-Y', 'worst 10-s segment: PSNR-Y, SSIM-Y'],
    style: { head: [], border: [] },
  });
  for (const r of quality) {
    const w = r.worstSegment;
    q.push([
      r.clip,
      r.compared,
      r.frames,
      r.psnrY.toFixed(2),
      r.ssimY.toFixed(4),
      `#${w.segment}: ${w.psnrY.toFixed(2)}, ${w.ssimY.toFixed(4)}`,
    ]);
  }
  if (quality.length) process.stdout.write(`${q.toString()}\n`);
}
