// The pirate's transforms against a real mark: `npm run bench:attacks -- [--input FILE] [--seconds 60] [--size 640x360]
// [--segment-seconds 10] [--only NAME,…] [--reading-out FILE [--reading-of NAME]] [--work DIR] [--json]`.
//
// A film (a pan over a still of the Mandelbrot set at 640×360 with a patch of it moving on its own, or --input) is
// marked with one viewer's bits by the real embedder, as ingest marks its variants. Each attack of
// ./attacks.ts turns the marked copy into a leak with ffmpeg (x264, CRF 23 unless the attack says
// otherwise), the real detector reads it against the original, and the real matcher decides among
// 20 viewers with drm's ids, the marked one among them. A synthesised 60-s track is marked the
// same way and read through ./attacks.ts's music attacks (order, speed with and without the pitch,
// codecs). --segment-seconds marks both in segments of that length, as ingest --segment-seconds does (the
// attacks' own cuts stay 10-s parts: a pirate does not cut on segments). Printed per attack: the segments read,
// the decided bits, the median |z|, and the verdict against the truth. --reading-out FILE writes the |z| of every
// segment of the marked copy (CRF 23), or of the attack --reading-of names, for bench:verdicts --reading. Prints numbers; not a test.
import Table from 'cli-table3';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import { wordToBinaryId } from '../../src/domain/identity/nested-code.js';
import { ID_MARGIN, viewerIdKey, viewerIdWord } from '../../src/domain/identity/viewer-ids.js';
import { matchCandidates } from '../../src/domain/forensics/matching/matching.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { watermarkKey } from '../../src/watermark/keyed-random.js';
import { detectVideo } from '../../src/watermark/video/detect.js';
import { embedVideo } from '../../src/watermark/video/embed.js';
import { musicGraph } from '../../test/helpers/media.js';
import type { SegmentReading } from '../../src/watermark/segments.js';
import { detectMusic } from '../../src/watermark/music/detect.js';
import { embedMusic } from '../../src/watermark/music/embed.js';
import { ATTACKS, type Attack, MUSIC_ATTACKS } from './attacks.js';
import { makePanOverStill } from './pan-film.js';
import { FIXED_RULE, segmentSecondsOption, withSegmentSeconds } from '../../src/watermark/segment-rule.js';

const { values } = parseArgs({
  options: {
    input: { type: 'string' },
    seconds: { type: 'string', default: '60' },
    'segment-seconds': { type: 'string', default: '10' },
    size: { type: 'string', default: '640x360' },
    only: { type: 'string' },
    work: { type: 'string' },
    'reading-out': { type: 'string' },
    'reading-of': { type: 'string', default: 'the marked copy (CRF 23)' },
    json: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const rule = withSegmentSeconds(FIXED_RULE, segmentSecondsOption(values['segment-seconds']));
const [width, height] = (values.size ?? '640x360').split('x').map(Number) as [number, number];
const bins = mediaBinaries();
const work = values.work ?? fs.mkdtempSync(path.join(os.tmpdir(), 'drm-attacks-'));
fs.mkdirSync(work, { recursive: true });
const file = (name: string) => path.join(work, name);
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);

const idKey = viewerIdKey(randomBytes(32));
const viewers = Array.from({ length: 20 }, (_, i) => ({
  viewerId: `viewer-${i}`,
  binaryId: wordToBinaryId(viewerIdWord(idKey, BigInt(i), ID_MARGIN)),
}));
const leaker = viewers[7] as (typeof viewers)[number];
const key = watermarkKey(randomBytes(32));
const contentId = '2b7c1f3a-6e5d-4c8b-9a0f-1d2e3c4b5a60';
const backend = createCpuPoolBackend();

/** The film as the bench marks it: x264 at CRF 16, the source of every leak. */
const filmOut = ['-t', String(seconds), '-c:v', 'libx264', '-crf', '16', '-preset', 'veryfast', '-pix_fmt', 'yuv420p'];

if (!fs.existsSync(file('film.mp4'))) {
  if (values.input) ff('-i', values.input, ...filmOut, '-an', file('film.mp4'));
  else makePanOverStill(ff, work, { width, height }, filmOut);
}
log('marking the film with the leaker’s bits');
await embedVideo({
  rule,
  bins,
  key,
  contentId,
  input: file('film.mp4'),
  output: file('marked.mp4'),
  bits: leaker.binaryId,
  backend,
});

const only = values.only?.split(',');
// A name or the start of one (names may hold commas: `--only 'phone:,heavy crop'`).
const chosen = (list: readonly Attack[]) => list.filter((a) => !only || only.some((o) => a.name.startsWith(o)));
const rows: Row[] = [];

interface Row {
  family: string;
  attack: string;
  segments: number;
  /** segments read at |z| ≥ 4 */
  segmentsDecided: number;
  decided: number;
  wrongBits: number;
  medianZ: number;
  /** |z| of every segment read */
  zs: number[];
  verdict: string;
  truth: string;
}

/** A leak's reading through the real matcher, against the truth. */
function judge(attack: Attack, segments: readonly SegmentReading[]): Row {
  const result = matchCandidates(segments, viewers, { mask: idKey.mask, rule });
  const zs = segments.map((s) => Math.abs(s.z)).sort((a, b) => a - b);
  // The unmarked film carries nobody's bits: any bit it decides is wrong, and anyone it names is innocent.
  const wrong = segments.filter(
    (s) => Math.abs(s.z) >= 4 && (attack.unmarked || (s.z > 0 ? '0' : '1') !== leaker.binaryId[s.index % 40]),
  ).length;
  const leakerNamed = result.matched?.viewerId === leaker.viewerId && !attack.unmarked;
  const named = result.matched && (leakerNamed ? 'the leaker' : 'AN INNOCENT');
  const among = result.candidateSet.some((c) => c.viewerId === leaker.viewerId) ? 'leaker among candidates' : '';
  return {
    family: attack.family,
    attack: attack.name,
    segments: segments.length,
    segmentsDecided: zs.filter((z) => z >= 4).length,
    decided: result.decidedBits,
    wrongBits: wrong,
    medianZ: zs.length === 0 ? 0 : (zs[zs.length >> 1] as number),
    zs,
    verdict: result.classification,
    truth: named || among,
  };
}

/** Makes each leak with ffmpeg and reads it; a leak ffmpeg cannot make is logged and left out. */
async function runAttacks(
  list: readonly Attack[],
  make: (a: Attack, leak: string) => void,
  read: (leak: string) => Promise<SegmentReading[]>,
  ext: string,
) {
  for (const attack of list) {
    const started = performance.now();
    const leak = file(`leak-${rows.length}.${ext}`);
    try {
      make(attack, leak);
    } catch (err) {
      log(`${attack.name}: ffmpeg could not make the leak: ${(err as Error).message.split('\n')[1] ?? ''}`);
      continue;
    }
    const row = judge(
      attack,
      await read(leak).catch((err: Error) => {
        log(`${attack.name}: the detector failed: ${err.message}`);
        return [];
      }),
    );
    rows.push(row);
    log(
      `${attack.name}: ${row.verdict}, ${row.decided} bits decided in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
  }
}

await runAttacks(
  chosen(ATTACKS),
  (attack, leak) => {
    const args = attack.args(seconds);
    const crf = args.includes('-crf') ? [] : ['-crf', '23'];
    ff(
      '-i',
      file(attack.unmarked ? 'film.mp4' : 'marked.mp4'),
      ...args,
      '-c:v',
      'libx264',
      ...crf,
      '-preset',
      'veryfast',
      '-pix_fmt',
      'yuv420p',
      '-an',
      leak,
    );
  },
  async (leak) =>
    (await detectVideo({ bins, key, contentId, leak, rule, original: file('film.mp4'), backend })).segments,
  'mp4',
);

const music = chosen(MUSIC_ATTACKS);
if (music.length > 0) {
  log('marking the track with the leaker’s bits');
  if (!fs.existsSync(file('music.wav')))
    ff('-filter_complex', musicGraph(0, seconds), '-c:a', 'pcm_s16le', file('music.wav'));
  await embedMusic({
    rule,
    bins,
    key,
    contentId,
    input: file('music.wav'),
    output: file('marked.m4a'),
    bits: leaker.binaryId,
  });
  await runAttacks(
    music,
    (attack, leak) => {
      const args = attack.args(seconds);
      ff('-i', file('marked.m4a'), ...args, ...(args.includes('-c:a') ? [] : ['-c:a', 'aac', '-b:a', '128k']), leak);
    },
    async (leak) => (await detectMusic({ bins, key, contentId, leak, rule, original: file('music.wav') })).segments,
    // Matroska holds AAC and MP3 alike
    'mka',
  );
}
await backend.close();
const reading = rows.find((r) => r.attack === values['reading-of']);
if (values['reading-out'] && reading) fs.writeFileSync(values['reading-out'], JSON.stringify(reading.zs));
if (!values.work) fs.rmSync(work, { recursive: true, force: true });

if (values.json)
  process.stdout.write(
    `${JSON.stringify({ seconds, segmentSeconds: rule.segmentSeconds, cpus: os.availableParallelism(), rows }, null, 2)}\n`,
  );
else {
  const table = new Table({
    head: [
      'family',
      'attack',
      'segments read',
      'decided (|z| ≥ 4)',
      'bits decided',
      'decided wrong',
      'median |z|',
      'verdict (20 viewers)',
      'against the truth',
    ],
    style: { head: [], border: [] },
  });
  for (const r of rows)
    table.push([
      r.family,
      r.attack,
      r.segments,
      r.segmentsDecided,
      r.decided,
      r.wrongBits,
      r.medianZ.toFixed(1),
      r.verdict,
      r.truth,
    ]);
  const track = rows.some((r) => r.family === 'music') ? ` and a ${seconds}-s track, each` : '';
  process.stdout.write(
    `The pirate's transforms on a ${seconds}-s ${width}×${height} film${track} marked in ${rule.segmentSeconds}-s segments for one of 20 viewers, ${os.availableParallelism()} CPUs\n${table.toString()}\n`,
  );
}
