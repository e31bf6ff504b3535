// The pirate's transforms against a real mark: `npm run bench:attacks -- [--input FILE] [--seconds 60] [--only NAME,…] [--work DIR] [--json]`.
//
// A film (the quick start's pan over a still of the Mandelbrot set at 640×360, or --input) is
// marked with one viewer's bits by the real embedder, as ingest marks its variants. Each attack of
// ./attacks.ts turns the marked copy into a leak with ffmpeg (x264, CRF 23 unless the attack says
// otherwise), the real detector reads it against the original, and the real matcher decides among
// 20 viewers with drm's ids, the marked one among them. Printed per attack: the segments read,
// the decided bits, the median |z|, and the verdict against the truth. Prints numbers; not a test.
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
import { matchCandidates } from '../../src/forensics/matching.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { watermarkKey } from '../../src/watermark/keyed-random.js';
import { detectVideo } from '../../src/watermark/video/detect.js';
import { embedVideo } from '../../src/watermark/video/embed.js';
import { ATTACKS } from './attacks.js';

const { values } = parseArgs({
  options: {
    input: { type: 'string' },
    seconds: { type: 'string', default: '60' },
    only: { type: 'string' },
    work: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const bins = mediaBinaries();
const work = values.work ?? fs.mkdtempSync(path.join(os.tmpdir(), 'drm-attacks-'));
fs.mkdirSync(work, { recursive: true });
const file = (name: string) => path.join(work, name);
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);

const idKey = viewerIdKey(randomBytes(32));
const viewers = Array.from({ length: 20 }, (_, i) => ({ viewerId: `viewer-${i}`, binaryId: wordToBinaryId(viewerIdWord(idKey, BigInt(i), ID_MARGIN)) }));
const leaker = viewers[7] as (typeof viewers)[number];
const key = watermarkKey(randomBytes(32));
const contentId = '2b7c1f3a-6e5d-4c8b-9a0f-1d2e3c4b5a60';
const backend = createCpuPoolBackend();

if (!fs.existsSync(file('film.mp4'))) {
  if (values.input) ff('-i', values.input, '-t', String(seconds), '-c:v', 'libx264', '-crf', '16', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-an', file('film.mp4'));
  else {
    ff('-f', 'lavfi', '-i', 'mandelbrot=size=1280x720:start_scale=1.2:end_scale=1.2', '-frames:v', '1', file('still.png'));
    ff('-loop', '1', '-framerate', '25', '-i', file('still.png'), '-vf', "crop=640:360:x='20+t*9':y='30+t*4'", '-t', String(seconds), '-c:v', 'libx264', '-crf', '16', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', file('film.mp4'));
  }
}
log('marking the film with the leaker’s bits');
await embedVideo({ bins, key, contentId, input: file('film.mp4'), output: file('marked.mp4'), bits: leaker.binaryId, backend });

const only = values.only?.split(',');
const rows = [];
for (const attack of ATTACKS.filter((a) => !only || only.includes(a.name))) {
  const started = performance.now();
  const leak = file(`leak-${rows.length}.mp4`);
  const args = attack.args(seconds);
  const crf = args.includes('-crf') ? [] : ['-crf', '23'];
  try {
    ff('-i', file('marked.mp4'), ...args, '-c:v', 'libx264', ...crf, '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-an', leak);
  } catch (err) {
    log(`${attack.name}: ffmpeg could not make the leak: ${(err as Error).message.split('\n')[1] ?? ''}`);
    continue;
  }
  const detection = await detectVideo({ bins, key, contentId, leak, original: file('film.mp4'), backend }).catch((err: Error) => ({ segments: [], alignment: { unmatched: err.message } }));
  const result = matchCandidates(detection.segments, viewers, { mask: idKey.mask });
  const zs = detection.segments.map((s) => Math.abs(s.z)).sort((a, b) => a - b);
  const wrong = detection.segments.filter((s) => Math.abs(s.z) >= 4 && (s.z > 0 ? '0' : '1') !== leaker.binaryId[s.index % 40]).length;
  const truth = result.matched ? (result.matched.viewerId === leaker.viewerId ? 'the leaker' : 'AN INNOCENT') : result.candidateSet.some((c) => c.viewerId === leaker.viewerId) ? 'leaker among candidates' : '';
  rows.push({
    family: attack.family,
    attack: attack.name,
    segments: detection.segments.length,
    decided: result.decidedBits,
    wrongBits: wrong,
    medianZ: zs.length === 0 ? 0 : (zs[zs.length >> 1] as number),
    verdict: result.classification,
    truth,
    mirrored: (detection.alignment as Record<string, unknown>).mirrored ?? null,
  });
  log(`${attack.name}: ${result.classification}, ${result.decidedBits} bits decided in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
await backend.close();
if (!values.work) fs.rmSync(work, { recursive: true, force: true });

if (values.json) process.stdout.write(`${JSON.stringify({ seconds, cpus: os.availableParallelism(), rows }, null, 2)}\n`);
else {
  const table = new Table({ head: ['family', 'attack', 'segments read', 'bits decided', 'decided wrong', 'median |z|', 'verdict (20 viewers)', 'against the truth'], style: { head: [], border: [] } });
  for (const r of rows) table.push([r.family, r.attack, r.segments, r.decided, r.wrongBits, r.medianZ.toFixed(1), r.verdict, r.truth]);
  process.stdout.write(`The pirate's transforms on a ${seconds}-s 640×360 film marked for one of 20 viewers, ${os.availableParallelism()} CPUs\n${table.toString()}\n`);
}
