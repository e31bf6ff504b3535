import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import { DrmError } from '../../src/errors.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { probeMedia } from '../../src/media/probe.js';
import { watermarkKey } from '../../src/watermark/keyed-random.js';
import type { Detection } from '../../src/watermark/segments.js';
import { readPositions } from '../../src/domain/forensics/matching/readings.js';
import { detectVideo } from '../../src/watermark/video/detect.js';
import { embedVideo } from '../../src/watermark/video/embed.js';
import { FIXED_RULE } from '../../src/watermark/segment-rule.js';
import type { MediaInfo } from '../../src/media/probe.js';
import { placeLeak } from '../../src/watermark/video/detect-place.js';
import { alignLeakInTime } from '../../src/watermark/video/detect-time.js';
import { VIDEO_REFERENCE, writeVideoReference } from '../../src/watermark/video/reference.js';

// Real ffmpeg and x264 end to end on a slow pan across a still of the Mandelbrot set (detail at
// every scale, always moving, like the corpus's photographs in motion), made here with lavfi: no
// fixture files. (A zoom would not do: a crop of a zoom looks like a later frame. Nor would a pan
// alone: there a shift in place looks like a shift in time, so a patch of the still moves across
// it on a path of its own, as things in a film move against its background.) Small frames keep the
// suite quick; the mark's strength on real 720p/1080p material is what bench/robustness measures.
const bins = mediaBinaries();
const key = watermarkKey(Buffer.alloc(32, 9));
const contentId = '8d3c1f2a-6b7e-4a9d-8c5f-1e2d3c4b5a69';
const bits = '1011001110001011110000101101001110100101';
const backend = createCpuPoolBackend();
let dir: string;
const file = (name: string) => path.join(dir, name);
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
const PAN_WITH_SPRITE =
  "[0:v]split[a][b];[a]crop=640:360:x='20+t*14':y='30+t*6'[pan];[b]crop=200:200:330:300,hflip[sprite];" +
  "[pan][sprite]overlay=x='220+200*sin(t/3)':y='80+70*cos(t/4)'";
const x264 = (crf: number) => ['-c:v', 'libx264', '-crf', String(crf), '-preset', 'veryfast', '-pix_fmt', 'yuv420p'];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-video-'));
  ff(
    '-f',
    'lavfi',
    '-i',
    'mandelbrot=size=1280x720:start_scale=1.2:end_scale=1.2',
    '-frames:v',
    '1',
    file('still.png'),
  );
  ff(
    '-loop',
    '1',
    '-framerate',
    '25',
    '-i',
    file('still.png'),
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=44100',
    '-filter_complex',
    PAN_WITH_SPRITE,
    '-t',
    '22',
    ...x264(16),
    '-c:a',
    'aac',
    '-shortest',
    file('film.mp4'),
  );
  ff('-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100:duration=2', '-c:a', 'aac', file('tone.m4a'));
  fs.writeFileSync(file('notes.txt'), 'not a film\n'.repeat(100));
  await embedVideo({ ...marking, input: file('film.mp4'), output: file('marked.mp4') });
}, 120_000);
afterAll(async () => {
  await backend.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const marking = { rule: FIXED_RULE, bins, key, contentId, bits, backend };

const detect = (leak: string, original = 'film.mp4') =>
  detectVideo({ rule: FIXED_RULE, bins, key, contentId, leak: file(leak), original: file(original), backend });

/** Every segment the leak holds reads the bit the viewer was given, with |z| ≥ minZ. */
function expectBits(d: Detection, minZ: number) {
  expect(d.segments.length).toBeGreaterThan(0);
  for (const s of d.segments) {
    expect({ index: s.index, bit: s.bit }).toEqual({ index: s.index, bit: bits[s.index % 40] });
    expect(Math.abs(s.z)).toBeGreaterThanOrEqual(minZ);
  }
}

/** The full 10-s segments read right with |z| ≥ minZ; the 2-s tail may stay undecided but never reads wrong. */
function expectFullSegments(d: Detection, minZ: number) {
  expectBits({ ...d, segments: d.segments.filter((s) => s.coverage >= 5) }, minZ);
  for (const s of d.segments) expect([bits[s.index % 40], '?']).toContain(s.bit);
}

/** A screen filmed from below: the top edge narrowed by `share` of the width on each side. */
const keystone = (share: number) =>
  `perspective=x0=W*${share}:y0=0:x1=W*(1-${share}):y1=0:x2=0:y2=H:x3=W:y3=H:sense=destination`;

describe('embedding the video mark', { timeout: 120_000 }, () => {
  it('writes one continuous MP4 with every frame, the same size and the audio kept', async () => {
    const [orig, marked] = await Promise.all([
      probeMedia(bins, file('film.mp4')),
      probeMedia(bins, file('marked.mp4')),
    ]);
    expect(marked.video).toMatchObject({ codec: 'h264', width: 640, height: 360, fps: 25, frames: orig.video?.frames });
    expect(marked.audio?.codec).toBe('aac');
    expect(marked.duration).toBeCloseTo(orig.duration, 0);
  });

  it('refuses a file without video, a non-media file and leaves no output', async () => {
    for (const input of ['tone.m4a', 'notes.txt']) {
      const err = await embedVideo({
        rule: FIXED_RULE,
        bins,
        key,
        contentId,
        input: file(input),
        output: file('out.mp4'),
        bits,
        backend,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DrmError);
      expect((err as DrmError).code).toBe('BAD_REQUEST');
      expect((err as DrmError).message).toMatch(/no video stream|not a media file/);
      expect(fs.existsSync(file('out.mp4'))).toBe(false);
    }
  });

  it('stops both ffmpegs and removes the partial output when aborted', async () => {
    const controller = new AbortController();
    const run = embedVideo({
      rule: FIXED_RULE,
      bins,
      key,
      contentId,
      input: file('film.mp4'),
      output: file('aborted.mp4'),
      bits,
      backend,
      signal: controller.signal,
      onProgress: (done) => done === 40 && controller.abort(),
    });
    await expect(run).rejects.toThrow();
    expect(fs.existsSync(file('aborted.mp4'))).toBe(false);
  });
});

describe('detecting the video mark with the original at hand', { timeout: 120_000 }, () => {
  it('reads every segment of the marked copy', async () => {
    const d = await detect('marked.mp4');
    expect(d.segments.map((s) => s.index)).toEqual([0, 1, 2]);
    expectBits(d, 5);
    expect(d.bits.slice(0, 3)).toBe(bits.slice(0, 3));
    expect(d.bits.slice(3)).toBe('?'.repeat(37));
    expect(d.alignment.filmWindow).toBeUndefined();
    // What each part cost is reported; no second decode without a film window.
    expect(d.alignment.decodeSeconds).toBeGreaterThan(0);
    expect(d.alignment.readingSeconds).toBeGreaterThan(0);
    expect(d.alignment.windowDecodeSeconds).toBeUndefined();
  });

  it('reads it after x264 CRF 28 of a copy that starts 4.3 s in, and finds that offset', async () => {
    ff('-ss', '4.3', '-i', file('marked.mp4'), ...x264(28), '-an', file('trim-crf28.mp4'));
    const d = await detect('trim-crf28.mp4');
    expect(d.alignment.offsetSeconds).toBeCloseTo(4.3, 1);
    expectBits(d, 4);
  });

  it('reads it after a 5% crop scaled back to full size', async () => {
    ff('-i', file('marked.mp4'), '-vf', 'crop=608:342,scale=640:360', ...x264(20), '-an', file('crop.mp4'));
    const d = await detect('crop.mp4');
    expect(d.alignment.rect).not.toBe('640x360+0+0');
    // The 10-s segments read right; the 2-s tail of this hard-edged clip, whose mark the 52-dB
    // cap on each frame's change holds down most, may stay undecided but never reads wrong.
    expectBits({ ...d, segments: d.segments.filter((s) => s.coverage >= 5) }, 4);
    for (const s of d.segments) expect([bits[s.index % 40], '?']).toContain(s.bit);
  });

  it('reads it after a change to 30 frames per second', async () => {
    ff('-i', file('marked.mp4'), '-vf', 'fps=30', ...x264(20), '-an', file('fps30.mp4'));
    expectBits(await detect('fps30.mp4'), 4);
  });

  it('reads each segment of a copy whose segments were put in reverse order (each found in the original on its own)', async () => {
    const part = (from: number, to: number, label: string) => `[0:v]trim=${from}:${to},setpts=PTS-STARTPTS[${label}]`;
    ff(
      '-i',
      file('marked.mp4'),
      '-filter_complex',
      `${part(20, 22, 'c')};${part(10, 20, 'b')};${part(0, 10, 'a')};[c][b][a]concat=n=3:v=1[v]`,
      '-map',
      '[v]',
      ...x264(20),
      file('reversed.mp4'),
    );
    const d = await detect('reversed.mp4');
    expect(d.segments.map((s) => s.index).sort()).toEqual([0, 1, 2]);
    expectBits(d, 4);
  });

  it('reads it played 8% fast (each piece followed at its own speed)', async () => {
    ff('-i', file('marked.mp4'), '-vf', 'setpts=PTS/1.08', '-r', '25', ...x264(20), '-an', file('fast.mp4'));
    const d = await detect('fast.mp4');
    expect(d.segments.map((s) => s.index)).toEqual([0, 1, 2]);
    expectBits(d, 4);
  });

  it('reads an average of two copies that differ in segment 1 as that segment’s mark erased, the others kept', async () => {
    const other = `${bits[0]}${bits[1] === '0' ? '1' : '0'}${bits.slice(2)}`;
    await embedVideo({
      rule: FIXED_RULE,
      bins,
      key,
      contentId,
      input: file('film.mp4'),
      output: file('marked-other.mp4'),
      bits: other,
      backend,
    });
    ff(
      '-i',
      file('marked.mp4'),
      '-i',
      file('marked-other.mp4'),
      '-filter_complex',
      '[0:v][1:v]blend=all_mode=average',
      ...x264(18),
      file('average.mp4'),
    );
    const d = await detect('average.mp4');
    const readings = readPositions(d.segments, FIXED_RULE);
    expect(readings.erased).toEqual([1]);
    expect(readings.readout.slice(0, 3)).toBe(`${bits[0]}?${bits[2]}`);
    // the marked copy itself loses nothing
    expect(readPositions((await detect('marked.mp4')).segments, FIXED_RULE).erased).toEqual([]);
  });

  it('reads a copy mirrored left for right, and one turned upside down, and says so', async () => {
    ff('-i', file('marked.mp4'), '-vf', 'hflip', ...x264(20), '-an', file('hflip.mp4'));
    const h = await detect('hflip.mp4');
    expect(h.alignment.mirrored).toBe('horizontal');
    expectBits(h, 4);
    ff('-i', file('marked.mp4'), '-vf', 'vflip', ...x264(20), '-an', file('vflip.mp4'));
    const v = await detect('vflip.mp4');
    expect(v.alignment.mirrored).toBe('vertical');
    expectBits(v, 4);
    expect((await detect('marked.mp4')).alignment.mirrored).toBeUndefined();
  });

  it('reads a mirrored copy of footage that looks the same mirrored: both readings scored, the marked one kept', async () => {
    // The film made symmetric left for right: mirrored or not, its pictures line up alike, and only the mark can say.
    const symmetric = '[0:v]split[a][b];[b]hflip[c];[a][c]blend=all_expr=(A+B)/2';
    ff('-i', file('film.mp4'), '-t', '12', '-filter_complex', symmetric, ...x264(16), '-an', file('symmetric.mp4'));
    await embedVideo({ ...marking, input: file('symmetric.mp4'), output: file('symmetric-marked.mp4') });
    ff('-i', file('symmetric-marked.mp4'), '-vf', 'hflip', ...x264(20), '-an', file('symmetric-hflip.mp4'));
    const d = await detect('symmetric-hflip.mp4', 'symmetric.mp4');
    expect(d.alignment.readingsTried).toBe(2);
    expect(d.alignment.mirrored).toBe('horizontal');
    expect(d.segments.map((s) => s.index)).toEqual([0, 1]);
    expect(d.segments[0]?.bit).toBe(bits[0]);
    expect(Math.abs(d.segments[0]?.z ?? 0)).toBeGreaterThanOrEqual(4);
  });

  it('finds a mirrored copy shown at 45% over moving noise, and reads it through that window alone', async () => {
    const pip =
      '[0:v]split[a][b];[b]lutyuv=y=110:u=128:v=128,noise=alls=60:allf=t[bg];' +
      '[a]hflip,scale=288:162[small];[bg][small]overlay=x=40:y=170';
    ff('-i', file('marked.mp4'), '-filter_complex', pip, ...x264(20), '-an', file('pip.mp4'));
    const d = await detect('pip.mp4');
    expect(d.alignment.mirrored).toBe('horizontal');
    expect(d.alignment.windowDecodeSeconds).toBeGreaterThan(0);
    // The film's 288×162 at (40, 170), in the leak's pixels, to a pixel or two: a window inside the film's edges
    // reads it as a crop, which reads weaker.
    const [w = 0, h = 0, x = 0, y = 0] = String(d.alignment.filmWindow).split(/[x+]/).map(Number);
    const edges = [x, y, x + w, y + h];
    for (const [n, edge] of [40, 170, 328, 332].entries())
      expect(Math.abs((edges[n] as number) - edge)).toBeLessThanOrEqual(3);
    expectFullSegments(d, 4);
  });

  it('places a leak without using up the thumbnails every plausible orientation is placed on', async () => {
    const work = fs.mkdtempSync(path.join(dir, 'place-'));
    const reference = path.join(work, VIDEO_REFERENCE);
    const film = (await probeMedia(bins, file('film.mp4'))).video as NonNullable<MediaInfo['video']>;
    await writeVideoReference(bins, file('film.mp4'), reference, film.width, film.height);
    const infoOf = async (f: string) => {
      const info = await probeMedia(bins, f);
      return { ...(info.video as NonNullable<MediaInfo['video']>), duration: info.duration };
    };
    const [orig, leak] = [await infoOf(reference), await infoOf(file('marked.mp4'))];
    const o = { rule: FIXED_RULE, bins, key, contentId, leak: file('marked.mp4'), original: reference, backend };
    const { readings: orientations } = await alignLeakInTime({ ...o, reference: true }, reference, work, orig, leak);
    const timed = orientations[0] as (typeof orientations)[number];
    const held = [timed.sampled.thumbs.length, timed.origThumbs.length];
    expect(Math.min(...held)).toBeGreaterThan(0);
    await placeLeak({ ...o, reference: true }, reference, timed, orig, leak);
    expect([timed.sampled.thumbs.length, timed.origThumbs.length]).toEqual(held);
  });

  it('reads a copy turned 4° and one seen at a 5% keystone, each through a fitted projective map', async () => {
    for (const [name, filter] of [
      ['turned.mp4', 'rotate=4*PI/180'],
      ['keystone.mp4', keystone(0.05)],
    ] as const) {
      ff('-i', file('marked.mp4'), '-vf', filter, ...x264(20), '-an', file(name));
      const d = await detect(name);
      expect(d.alignment.shownCorners, name).toBeDefined();
      expectFullSegments(d, 4);
    }
  });

  it('reads a copy cropped 10% off-centre, once its time is lined up again through the crop', async () => {
    ff(
      '-i',
      file('marked.mp4'),
      '-vf',
      'crop=iw*0.9:ih*0.9:iw*0.1:0,scale=710:400',
      ...x264(20),
      '-an',
      file('offcentre.mp4'),
    );
    const d = await detect('offcentre.mp4');
    expect(d.alignment.rect).toBe('144x81+16+0');
    expectFullSegments(d, 4);
  });

  it('finds the 60% of the frame a heavily cropped copy shows, off centre, and reads no bit wrong', async () => {
    const crop = 'crop=iw*0.6:ih*0.6:iw*0.35:ih*0.1,scale=640:360';
    ff('-i', file('marked.mp4'), '-vf', crop, ...x264(20), '-an', file('heavy-crop.mp4'));
    const d = await detect('heavy-crop.mp4');
    // The reference plane is 160×90: the crop is 96×54 of it at (56, 9).
    const [w = 0, h = 0, x = 0, y = 0] = String(d.alignment.rect).split(/[x+]/).map(Number);
    for (const [got, want] of [
      [w, 96],
      [h, 54],
      [x, 56],
      [y, 9],
    ])
      expect(Math.abs((got as number) - (want as number))).toBeLessThanOrEqual(2);
    // A quarter of the pixels carry a weaker mark: no bit reads wrong, and the mark is found.
    for (const s of d.segments) expect([bits[s.index % 40], '?']).toContain(s.bit);
    expect(d.segments.some((s) => Math.abs(s.z) >= 4)).toBe(true);
  });

  it('reads it after gamma, contrast and saturation are changed', async () => {
    ff(
      '-i',
      file('marked.mp4'),
      '-vf',
      'eq=gamma=1.4:contrast=1.3:saturation=0.4',
      ...x264(20),
      '-an',
      file('graded.mp4'),
    );
    expectBits(await detect('graded.mp4'), 4);
  });

  it('reads a camcorded copy: keystone, blur, sensor noise, 24 fps, CRF 32 and a slow handheld shake', async () => {
    const shake = 'crop=iw*0.96:ih*0.96:iw*0.02+iw*0.015*sin(t*0.7):ih*0.02+ih*0.015*cos(t*0.5),scale=640:360';
    const chain = `${keystone(0.04)},${shake},gblur=sigma=1.5,noise=alls=8:allf=t,fps=24`;
    ff('-i', file('marked.mp4'), '-vf', chain, ...x264(32), '-an', file('camcorded.mp4'));
    expectFullSegments(await detect('camcorded.mp4'), 3);
  });

  it('finds no mark in the unmarked original: every segment undecided', async () => {
    const d = await detect('film.mp4');
    for (const s of d.segments) expect(Math.abs(s.z)).toBeLessThan(4);
    expect(d.bits).toBe('?'.repeat(40));
  });

  it('refuses a leak without video and a leak that is not media', async () => {
    for (const leak of ['tone.m4a', 'notes.txt']) {
      const err = await detect(leak).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DrmError);
      expect((err as DrmError).code).toBe('BAD_REQUEST');
    }
  });
});
