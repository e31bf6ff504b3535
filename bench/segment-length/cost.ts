// What shorter segments cost: `npm run bench:segment-cost -- [--input FILE] [--seconds 60] [--size 640x360]
// [--crf 18] [--json]`.
//
// A film (bench:attacks' pan over a still, or --input) is packaged by ingest's own video packaging
// (x264 on the keyframe grid, AES-128 HLS) once per segment length. Printed per length: the segment
// files per hour, the segment requests per viewer-minute (each playlist and key is asked for once a
// session besides), the bitrate of the segments, and what the keyframes of a shorter grid add to it
// against 10-s segments packaged in the same run. x264 with the same input and options writes the
// same bytes every time, so one packaging per length is the figure. Prints numbers; not a test.
import Table from 'cli-table3';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { videoPackaging } from '../../src/domain/ingest/package-video.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { playlistIn, readPlaylist, writeKeyInfo } from '../../src/media/hls.js';
import { probeMedia } from '../../src/media/probe.js';
import { SEGMENT_LENGTHS } from '../../src/watermark/segment-rule.js';
import { makePanOverStill } from '../attacks/pan-film.js';

const { values } = parseArgs({
  options: {
    input: { type: 'string' },
    seconds: { type: 'string', default: '60' },
    size: { type: 'string', default: '640x360' },
    crf: { type: 'string', default: '18' },
    json: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const [width, height] = values.size.split('x').map(Number) as [number, number];
const bins = mediaBinaries();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-segment-cost-'));
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const source = ['-t', String(seconds), '-c:v', 'libx264', '-crf', '14', '-preset', 'veryfast', '-pix_fmt', 'yuv420p'];
const film = values.input
  ? (ff('-i', values.input, ...source, path.join(work, 'film.mp4')), path.join(work, 'film.mp4'))
  : makePanOverStill(ff, work, { width, height }, source);
const info = await probeMedia(bins, film);

interface Row {
  segmentSeconds: number;
  segments: number;
  filesPerHour: number;
  requestsPerViewerMinute: number;
  kbps: number;
  addedByKeyframes: number;
  packagingSeconds: number;
}

async function packageAt(segmentSeconds: number) {
  const dir = path.join(work, `s${segmentSeconds}`);
  fs.mkdirSync(dir);
  const started = performance.now();
  await videoPackaging.plain({
    bins,
    input: film,
    info,
    dir,
    keyInfo: writeKeyInfo(dir, randomBytes(16)),
    segmentSeconds,
    crf: Number(values.crf),
    preset: 'fast',
  });
  const packagingSeconds = (performance.now() - started) / 1000;
  const plain = path.join(dir, 'plain');
  const segments = readPlaylist(playlistIn(plain));
  const bytes = segments.reduce((sum, s) => sum + fs.statSync(path.join(plain, s.file)).size, 0);
  const duration = segments.reduce((sum, s) => sum + s.duration, 0);
  log(`${segmentSeconds}-s segments: ${segments.length} files, ${(bytes / 1e6).toFixed(2)} MB`);
  return { segments: segments.length, kbps: (bytes * 8) / duration / 1000, packagingSeconds };
}

const measured = new Map<number, Awaited<ReturnType<typeof packageAt>>>();
for (const s of SEGMENT_LENGTHS) measured.set(s, await packageAt(s));
const base = measured.get(10) as { kbps: number };
const rows: Row[] = SEGMENT_LENGTHS.map((s) => {
  const m = measured.get(s) as Awaited<ReturnType<typeof packageAt>>;
  return {
    segmentSeconds: s,
    segments: m.segments,
    filesPerHour: 3600 / s,
    requestsPerViewerMinute: 60 / s,
    kbps: m.kbps,
    addedByKeyframes: m.kbps / base.kbps - 1,
    packagingSeconds: m.packagingSeconds,
  };
});
fs.rmSync(work, { recursive: true, force: true });

if (values.json) process.stdout.write(`${JSON.stringify({ seconds, width, height, rows }, null, 2)}\n`);
else {
  const t = new Table({
    head: [
      'segment',
      'segments here',
      'files per hour',
      'requests per viewer-minute',
      'kb/s',
      'vs 10 s',
      'packaging s',
    ],
    style: { head: [], border: [] },
  });
  for (const r of rows)
    t.push([
      `${r.segmentSeconds} s`,
      r.segments,
      r.filesPerHour,
      r.requestsPerViewerMinute,
      r.kbps.toFixed(0),
      `${r.addedByKeyframes >= 0 ? '+' : ''}${(100 * r.addedByKeyframes).toFixed(1)}%`,
      r.packagingSeconds.toFixed(1),
    ]);
  const what = values.input ? path.basename(values.input) : `the ${width}×${height} pan over a still`;
  process.stdout.write(
    `Segment length and its cost: ${seconds} s of ${what}, x264 CRF ${values.crf} fast, per variant\n${t.toString()}\n`,
  );
}
