import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DrmError } from '../../src/errors.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { monoPcm, readMonoPcm } from '../../src/media/audio-pcm.js';
import { lumaFrames, preciseLumaFrames } from '../../src/media/video-frames.js';
import { frameLogTimes, sampleVideo } from '../../src/media/video-samples.js';
import { parseFfmpegReport, probeMedia } from '../../src/media/probe.js';

// Real ffmpeg on media made here from ffmpeg's own test sources (lavfi): no fixture files.
const bins = mediaBinaries();
let dir: string;
const file = (name: string) => path.join(dir, name);

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-media-'));
  const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
  ff(
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=320x240:rate=25:duration=3',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=1000:sample_rate=48000:duration=3',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    file('clip.mp4'),
  );
  ff(
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=44100:duration=2',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    file('tone.m4a'),
  );
  ff(
    '-f',
    'lavfi',
    '-i',
    'color=c=white:size=64x48:rate=10:duration=1',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    file('white.mp4'),
  );
  ff('-i', file('clip.mp4'), '-c', 'copy', file('clip.ts'));
  fs.writeFileSync(file('notes.txt'), 'not a film\n'.repeat(100));
  fs.writeFileSync(file('noise.bin'), Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7919) % 251)));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function collect<T>(gen: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

/** The pids of this process's children whose command line names the file (Linux /proc). */
function childProcessesReading(name: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === process.pid && fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(name))
        pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

describe('probing media', () => {
  it('reports a video file: duration, size, frame rate and its audio', async () => {
    const info = await probeMedia(bins, file('clip.mp4'));
    expect(info.duration).toBeCloseTo(3, 0);
    expect(info.video).toMatchObject({ codec: 'h264', width: 320, height: 240, fps: 25 });
    expect(info.audio).toMatchObject({ codec: 'aac', sampleRate: 48_000, channels: 1 });
  });

  it('reports an MPEG-TS file (an HLS segment) the same way', async () => {
    const info = await probeMedia(bins, file('clip.ts'));
    expect(info.duration).toBeCloseTo(3, 0);
    expect(info.video).toMatchObject({ codec: 'h264', width: 320, height: 240, fps: 25 });
    expect(info.audio).toMatchObject({ codec: 'aac', sampleRate: 48_000, channels: 1 });
  });

  it('reads the fields of an ffmpeg input report (what probes .ts files)', () => {
    const report = [
      "Input #0, mpegts, from 'leak.ts':",
      '  Duration: 00:01:05.02, start: 1.400000, bitrate: 2053 kb/s',
      '    Stream #0:0[0x100]: Video: h264 (High) ([27][0][0][0] / 0x001B), yuv420p(progressive), 1920x1080 [SAR 1:1 DAR 16:9], 29.97 fps, 29.97 tbr, 90k tbn',
      '    Stream #0:1[0x101](und): Audio: aac (LC) ([15][0][0][0] / 0x000F), 44100 Hz, 5.1(side), fltp, 317 kb/s',
    ].join('\n');
    expect(parseFfmpegReport(report, 'leak.ts')).toEqual({
      duration: 65.02,
      formatName: 'mpegts',
      video: { codec: 'h264', width: 1920, height: 1080, fps: 29.97 },
      audio: { codec: 'aac', sampleRate: 44_100, channels: 6 },
    });
    expect(() => parseFfmpegReport("Input #0, mpegts, from 'x.ts':\n  Duration: N/A", 'x.ts')).toThrow(
      /no audio or video stream/,
    );
  });

  it('reports a music file as audio only', async () => {
    const info = await probeMedia(bins, file('tone.m4a'));
    expect(info.video).toBeUndefined();
    expect(info.audio).toMatchObject({ codec: 'aac', sampleRate: 44_100 });
  });

  it.each(['notes.txt', 'noise.bin', 'missing.mp4'])('refuses %s with a BAD_REQUEST naming it', async (name) => {
    const err = await probeMedia(bins, file(name)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DrmError);
    expect((err as DrmError).code).toBe('BAD_REQUEST');
    expect((err as DrmError).message).toContain(`${name} is not a media file`);
  });
});

describe('decoding through pipes', () => {
  it('yields the luma of every frame at the size asked for', async () => {
    const frames = await collect(lumaFrames(bins, file('clip.mp4'), { width: 160, height: 120 }));
    expect(frames).toHaveLength(75);
    for (const f of frames) expect(f.length).toBe(160 * 120);
    // testsrc2 moves: consecutive frames differ.
    expect(Buffer.compare(Buffer.from(frames[0] as Uint8Array), Buffer.from(frames[1] as Uint8Array))).not.toBe(0);
  });

  it('resamples the frame rate and reads a time range', async () => {
    const frames = await collect(
      lumaFrames(bins, file('clip.mp4'), { width: 32, height: 24, fps: 10, start: 1, duration: 1 }),
    );
    expect(frames).toHaveLength(10);
  });

  it('gives white as the top of the video luma range', async () => {
    const [frame] = await collect(lumaFrames(bins, file('white.mp4'), { width: 64, height: 48 }));
    const mean = (frame as Uint8Array).reduce((s, v) => s + v, 0) / (frame as Uint8Array).length;
    expect(mean).toBeGreaterThan(230);
  });

  it('stops ffmpeg when the reader stops early: the process is gone once the loop is left', async () => {
    let decoders: number[] = [];
    for await (const _ of lumaFrames(bins, file('clip.mp4'), { width: 320, height: 240 })) {
      decoders = childProcessesReading(file('clip.mp4'));
      break;
    }
    expect(decoders).toHaveLength(1);
    // Left running, ffmpeg would sit blocked on the full pipe: its /proc entry would stay.
    for (const pid of decoders) expect(fs.existsSync(`/proc/${pid}`), `ffmpeg ${pid} still running`).toBe(false);
  });

  it('decodes once into a thumbnail, a 10-bit proxy and the time of every fourth frame, proxy frame k being sample k', async () => {
    const proxy = file('proxy.mp4');
    const { thumbs, times } = await sampleVideo(bins, file('clip.mp4'), {
      fps: 25,
      spacing: 3.5 / 25,
      thumb: { width: 32, height: 24 },
      proxy: { width: 80, height: 60, file: proxy },
    });
    // 75 frames: 0, 4, …, 72.
    expect(thumbs).toHaveLength(19);
    for (const t of thumbs) expect(t.length).toBe(32 * 24);
    expect([...times].map((t) => Math.round(t * 25))).toEqual(Array.from({ length: 19 }, (_, k) => 4 * k));
    const info = await probeMedia(bins, proxy);
    expect(info.video).toMatchObject({ width: 80, height: 60 });
    const proxies = await collect(preciseLumaFrames(bins, proxy, { width: 80, height: 60 }));
    expect(proxies).toHaveLength(19);
    // Proxy frame 5 is frame 20 of the clip: of frames 17–23, the closest (testsrc2 moves).
    const around = await collect(
      preciseLumaFrames(bins, file('clip.mp4'), { width: 80, height: 60, select: [17, 18, 19, 20, 21, 22, 23] }),
    );
    const gap = (a: Float32Array, b: Float32Array) =>
      a.reduce((s, v, i) => s + Math.abs(v - (b[i] as number)), 0) / a.length;
    const gaps = around.map((f) => gap(proxies[5] as Float32Array, f));
    expect(gaps.indexOf(Math.min(...gaps))).toBe(3);
  });

  it('samples only the frames others refer to when told to skip the rest, each exactly as decoded and at its own time', async () => {
    // x264 with B-frames (some of them references): about half the frames are left, unevenly spaced.
    const withB = file('with-b.mp4');
    execFileSync(bins.ffmpeg, [
      '-v',
      'error',
      '-y',
      '-i',
      file('clip.mp4'),
      '-c:v',
      'libx264',
      '-preset',
      'medium',
      '-bf',
      '3',
      '-pix_fmt',
      'yuv420p',
      withB,
    ]);
    const all = await sampleVideo(bins, withB, {
      fps: 25,
      spacing: 0.5 / 25,
      thumb: { width: 32, height: 24 },
      proxy: { width: 80, height: 60, file: file('all.mp4') },
    });
    const some = await sampleVideo(bins, withB, {
      fps: 25,
      spacing: 0.5 / 25,
      skipNonReference: true,
      thumb: { width: 32, height: 24 },
      proxy: { width: 80, height: 60, file: file('some.mp4') },
    });
    expect(all.thumbs).toHaveLength(75);
    expect(some.thumbs.length).toBeLessThan(60);
    expect(some.thumbs.length).toBeGreaterThan(20);
    // Each kept frame is, to the bit, the one a full decode gives at its time (nothing drifts).
    const frames = [...all.times].map((t) => Math.round(t * 25));
    for (const [k, t] of some.times.entries())
      expect(some.thumbs[k]).toEqual(all.thumbs[frames.indexOf(Math.round(t * 25))]);
  });

  it('reads frame times from an ffmpeg frame log in its time base', () => {
    const log = [
      '#tb 0: 1/15360',
      '#media_type 0: video',
      '0,       1024,       1024,        0,        4, 0x06f902a1',
      '0,       3072,       3072,        0,        4, 0x070202a4',
      '',
    ].join('\n');
    expect([...frameLogTimes(log)]).toEqual([1024 / 15360, 3072 / 15360]);
  });

  it('says clearly that a music file has no video to decode', async () => {
    const err = await collect(lumaFrames(bins, file('tone.m4a'), { width: 32, height: 24 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DrmError);
    expect((err as DrmError).message).toMatch(/could not decode the video/);
  });

  it('yields mono float audio at the rate asked for, in blocks', async () => {
    const blocks = await collect(monoPcm(bins, file('tone.m4a'), { sampleRate: 22_050, blockSize: 4096 }));
    expect(blocks.slice(0, -1).every((b) => b.length === 4096)).toBe(true);
    const samples = await readMonoPcm(bins, file('tone.m4a'), { sampleRate: 22_050 });
    expect(samples.length).toBeGreaterThan(22_050 * 1.9);
    expect(samples.length).toBeLessThan(22_050 * 2.1);
    // A 440 Hz tone crosses zero about 880 times a second.
    let crossings = 0;
    for (let i = 1; i < samples.length; i++)
      if ((samples[i - 1] as number) < 0 !== (samples[i] as number) < 0) crossings++;
    expect(crossings / (samples.length / 22_050)).toBeGreaterThan(860);
    expect(crossings / (samples.length / 22_050)).toBeLessThan(900);
  });
});
