import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditBalance } from '../../src/domain/billing/admin.js';
import { refundAbandonedFee } from '../../src/domain/billing/watermark-fee.js';
import { DrmError } from '../../src/errors.js';
import { ingestContent, sweepAbandonedIngests } from '../../src/domain/ingest/ingest.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { makeTestApp, type TestApp } from '../helpers/context.js';
import { contentRowsIn, registerOrg } from '../helpers/fixtures.js';

// An organization's ingest of a source cut short (the first 110 kB of a 12-s film, as `head -c`
// leaves it) is refused before its watermark fee is taken; an ingest that fails after paying
// gets the fee back once. 12 s of film and 25 s of music, made here with lavfi.
const bins = mediaBinaries();
let t: TestApp;
let dir: string;
let orgId: string;
const file = (name: string) => path.join(dir, name);
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
/** The first 110 kB of a file. */
const cut = (from: string, to: string) => fs.writeFileSync(file(to), fs.readFileSync(file(from)).subarray(0, 110_000));

beforeAll(async () => {
  t = await makeTestApp('sqlite');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-ingest-cut-'));
  orgId = (await registerOrg(t)).organizationId;
  await creditBalance(t.ctx, orgId, { amount: 5000, idempotencyKey: 'for-the-fees' });
  const film = ['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440'];
  ff(
    ...film,
    '-t',
    '12',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    file('film.mp4'),
  );
  // Its index (moov) at the front, as a web-ready MP4 has it; ffmpeg writes it at the end otherwise.
  ff('-i', file('film.mp4'), '-c', 'copy', '-movflags', '+faststart', file('film-fast.mp4'));
  ff(
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=330:duration=25',
    '-c:a',
    'aac',
    '-movflags',
    '+faststart',
    file('track.m4a'),
  );
  cut('film-fast.mp4', 'film-fast-cut.mp4');
  cut('film.mp4', 'film-cut.mp4');
  cut('track.m4a', 'track-cut.m4a');
  // 3,000 bytes of noise in the middle: every packet is still there, some no longer decode
  const damaged = fs.readFileSync(file('film-fast.mp4'));
  const at = Math.floor(damaged.length * 0.55);
  for (let i = at; i < at + 3_000; i++) damaged[i] = (i * 7919) % 256;
  fs.writeFileSync(file('film-damaged.mp4'), damaged);
}, 60_000);
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const balance = async () => (await t.ctx.repos.organizations.find(orgId))?.apusdBalanceMicro;
const ledger = () => t.ctx.repos.ledger.list(orgId, { limit: 50, offset: 0 });
const contentRoot = () => path.join(t.dir, 'content');
const storedFiles = () =>
  fs.existsSync(contentRoot()) ? fs.readdirSync(contentRoot(), { recursive: true }).map(String).sort() : [];
const noBackend = async (): Promise<never> => {
  throw new Error('no DTCWT backend on this machine');
};

describe('drm ingest of a source cut short', () => {
  it.each([
    // The front-indexed MP4 still states 12 s; what is left decodes to about 3 s, then errors.
    [
      'film-fast-cut.mp4',
      'video',
      /^film-fast-cut\.mp4: the source is truncated or damaged: the container says 12\.0 s but only \d\.\d s can be read \(ffmpeg: .+\)$/,
    ],
    // With the index at the end, the cut loses it: the probe already refuses the file.
    ['film-cut.mp4', 'video', /film-cut\.mp4 is not a media file ffmpeg can read/],
    // Damage inside packets: only a decode sees it, and a source that pays a fee is decoded whole.
    [
      'film-damaged.mp4',
      'video',
      /^film-damaged\.mp4: the source is truncated or damaged: ffmpeg reports errors decoding it \(ffmpeg: .+\)$/,
    ],
    [
      'track-cut.m4a',
      'music',
      /^track-cut\.m4a: the source is truncated or damaged: the container says 25\.0 s but only \d+\.\d s can be read/,
    ],
  ] as const)('refuses %s before the fee: nothing charged, nothing published', async (name, type, message) => {
    const [before, entries, stored, rows] = [
      await balance(),
      await ledger(),
      storedFiles(),
      await contentRowsIn(path.join(t.dir, 'drm.db')),
    ];
    const req = { input: file(name), title: 'Cut short', type, watermark: true, organizationId: orgId };
    const err = await ingestContent(t.ctx, req, { backend: noBackend }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DrmError);
    expect((err as DrmError).code).toBe('BAD_REQUEST');
    expect((err as DrmError).message).toMatch(message);
    expect(await balance()).toBe(before);
    expect(await ledger()).toEqual(entries);
    expect(storedFiles()).toEqual(stored);
    expect(await contentRowsIn(path.join(t.dir, 'drm.db'))).toBe(rows);
  });
});

describe('an ingest that fails after paying the watermark fee', () => {
  it('is refunded once, however often the refund path runs', async () => {
    const before = await balance();
    const contentId = randomUUID();
    const req = {
      input: file('film.mp4'),
      title: 'No backend',
      type: 'video',
      watermark: true,
      organizationId: orgId,
      contentId,
    } as const;
    // The whole film is there: it passes the source check, pays, then fails for want of a backend.
    await expect(ingestContent(t.ctx, req, { backend: noBackend })).rejects.toThrow(/no DTCWT backend/);
    // The refund path twice more: as for an abandoned ingest, and a later ingest's sweep.
    await refundAbandonedFee(t.ctx, contentId);
    await sweepAbandonedIngests(t.ctx);
    const ofItem = (await ledger()).filter((e) => e.reference === contentId);
    expect(ofItem.map((e) => [e.kind, e.amountMicro]).sort()).toEqual([
      ['refund', 1_500_000_000],
      ['watermark_fee', -1_500_000_000],
    ]);
    expect(await balance()).toBe(before);
    expect(await t.ctx.repos.content.find(contentId)).toBeUndefined();
  });
});
