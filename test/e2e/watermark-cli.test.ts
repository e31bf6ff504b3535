import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaBinaries } from '../../src/media/binaries.js';
import { type CliResult, runDrm } from '../helpers/serve-process.js';

// `drm watermark embed|detect` as a content team runs it: the real binary, real files.
const bins = mediaBinaries();
const bits = '0100110001110000111100000111110000001111';
let dir: string;
const file = (name: string) => path.join(dir, name);
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-wm-cli-'));
  env = { DRM_SECRET: '', DRM_DATA_DIR: file('data') };
  // drm watermark reads the secret of a deployment and never makes one: this one is made here.
  expect((await runDrm(['migrate'], env)).code).toBe(0);
  const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
  ff('-f', 'lavfi', '-i', 'mandelbrot=size=640x360:start_scale=1.2:end_scale=1.2', '-frames:v', '1', file('still.png'));
  ff(
    '-loop',
    '1',
    '-framerate',
    '25',
    '-i',
    file('still.png'),
    '-vf',
    "crop=320:180:x='10+t*8':y='20+t*3'",
    '-t',
    '4',
    '-c:v',
    'libx264',
    '-crf',
    '16',
    '-preset',
    'veryfast',
    '-pix_fmt',
    'yuv420p',
    file('clip.mp4'),
  );
  ff('-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100:duration=2', '-c:a', 'aac', file('tone.m4a'));
  fs.writeFileSync(file('notes.txt'), 'not a film\n'.repeat(100));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const drm = (...args: string[]) => runDrm(['watermark', ...args], env, 120_000);

/** A failure: the exit code, nothing on stdout, one line on stderr. */
function expectOneLineError(r: CliResult, code: number, pattern: RegExp) {
  expect(r.code).toBe(code);
  expect(r.stdout).toBe('');
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(pattern);
}

describe('drm watermark embed', { timeout: 120_000 }, () => {
  it('writes the marked copy and says what it wrote (--json for scripts)', async () => {
    const r = await drm(
      'embed',
      file('clip.mp4'),
      '--bits',
      bits,
      '--out',
      file('marked.mp4'),
      '--backend',
      'cpu',
      '--json',
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      output: file('marked.mp4'),
      kind: 'video',
      bits,
      frames: 100,
      segments: 1,
      width: 320,
      height: 180,
    });
    expect(out.backend).toMatch(/^cpu/);
    expect(fs.statSync(file('marked.mp4')).size).toBeGreaterThan(10_000);
  });

  it.each([
    [['--bits', '0101'], /bits must be exactly 40 characters of 0 and 1/],
    [['--bits', 'x'.repeat(40)], /bits must be exactly 40 characters/],
    [['--bits', bits, '--content-id', 'film-1'], /--content-id must be a UUID/],
  ])('refuses %j with one line and exit 2', async (args, message) => {
    expectOneLineError(await drm('embed', file('clip.mp4'), '--out', file('x.mp4'), ...(args as string[])), 2, message);
    expect(fs.existsSync(file('x.mp4'))).toBe(false);
  });

  it('refuses a file that is not media, or missing, with one line and exit 2', async () => {
    expectOneLineError(
      await drm('embed', file('notes.txt'), '--bits', bits, '--out', file('x.mp4')),
      2,
      /notes\.txt is not a media file/,
    );
    expectOneLineError(
      await drm('embed', file('nope.mp4'), '--bits', bits, '--out', file('x.mp4')),
      2,
      /nope\.mp4 does not exist/,
    );
  });
});

describe('drm watermark detect', { timeout: 120_000 }, () => {
  it('prints per segment index, z, variant and the id bit it carries, and the 40-bit read-out as JSON', async () => {
    const r = await drm('detect', file('marked.mp4'), '--original', file('clip.mp4'), '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.rule).toBe('keyed');
    expect(out.segments).toHaveLength(1);
    // the content id's keyed rule put one bit of the id on segment 0: the read-out decides that one alone
    const { position } = out.segments[0];
    expect(out.segments[0]).toMatchObject({ index: 0, variant: expect.stringMatching(/^[AB]$/), bit: bits[position] });
    expect(typeof out.segments[0].z).toBe('number');
    expect(out.bits).toBe([...bits].map((b, p) => (p === position ? b : '?')).join(''));
  });

  it('marks and reads by the fixed rule of older content with --rule fixed: segment 0 carries bit 0', async () => {
    const fixed = ['--rule', 'fixed', '--backend', 'cpu'];
    const embed = await drm('embed', file('clip.mp4'), '--bits', bits, '--out', file('fixed.mp4'), ...fixed);
    expect(embed.code).toBe(0);
    const r = await drm('detect', file('fixed.mp4'), '--original', file('clip.mp4'), ...fixed, '--json');
    expect(JSON.parse(r.stdout)).toMatchObject({ rule: 'fixed', bits: `${bits[0]}${'?'.repeat(39)}` });
    const refused = await drm('detect', file('fixed.mp4'), '--original', file('clip.mp4'), '--rule', 'mod40');
    expectOneLineError(refused, 2, /--rule must be keyed or fixed/);
  });

  it('prints a table and the read-out for people', async () => {
    const r = await drm('detect', file('marked.mp4'), '--original', file('clip.mp4'));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/segment.*starts at.*leak covers.*z.*bit/);
    expect(r.stdout).toMatch(/bits: [01?]{40}/);
  });

  it('refuses to read without the secret that marked the copy', async () => {
    const r = await runDrm(['watermark', 'detect', file('marked.mp4'), '--original', file('clip.mp4')], {
      DRM_SECRET: '',
      DRM_DATA_DIR: file('elsewhere'),
    });
    expectOneLineError(r, 2, /no secret: set DRM_SECRET or point --data-dir/);
  });

  it('refuses a leak without video against a video original', async () => {
    expectOneLineError(await drm('detect', file('tone.m4a'), '--original', file('clip.mp4')), 2, /has no video stream/);
  });
});
