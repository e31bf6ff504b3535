import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DrmError } from '../../src/errors.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { hlsMuxArgs, keyframeGridArgs, playlistIn, readPlaylist, writeKeyInfo } from '../../src/media/hls.js';
import {
  decryptSegment,
  encryptSegment,
  markVariantDiscontinuities,
  segmentIv,
} from '../../src/media/segment-discontinuity.js';
import { markDiscontinuities, pesPids, TS_PACKET_SIZE } from '../../src/media/ts-discontinuity.js';

// The packaging post-pass that lets a session switch between variants A and B: the first packet
// of each PES stream in a segment carries the discontinuity indicator, and nothing else changes.

const PMT_PID = 0x1000;
const SDT_PID = 0x11;
const VIDEO = 0x100;
const AUDIO = 0x101;
const RANDOM_ACCESS = 0x40;

interface PacketSpec {
  pusi?: boolean;
  /** the adaptation field's flags byte; 'empty' for a field of length 0 (one stuffing byte, no flags) */
  af?: number | 'empty';
  /** payload bytes; without an adaptation field they are padded to 184 with 0xff (PSI stuffing) */
  payload?: Buffer;
}

function packet(pid: number, cc: number, spec: PacketSpec = {}): Buffer {
  const p = Buffer.alloc(TS_PACKET_SIZE, 0xff);
  const payload = spec.payload ?? Buffer.alloc(100, (pid + cc) & 0xff);
  p.writeUInt16BE((spec.pusi ? 0x4000 : 0) | pid, 1);
  p[0] = 0x47;
  if (spec.af === undefined) {
    p[3] = 0x10 | cc;
    payload.copy(p, 4);
    return p;
  }
  p[3] = 0x30 | cc;
  p[4] = TS_PACKET_SIZE - 5 - payload.length;
  if (spec.af === 'empty') {
    // a field of length 0 is the one byte of its length: the payload takes the rest
    p[4] = 0;
    Buffer.alloc(TS_PACKET_SIZE - 5, 0xaa).copy(p, 5);
    return p;
  }
  p[5] = spec.af;
  payload.copy(p, TS_PACKET_SIZE - payload.length);
  return p;
}

/** A PSI section after a pointer field: header, body, a CRC nobody here checks. */
function section(tableId: number, body: number[]): Buffer {
  const length = 5 + body.length + 4;
  return Buffer.from([
    0,
    tableId,
    0xb0 | (length >> 8),
    length & 0xff,
    0,
    1,
    0xc1,
    0,
    0,
    ...body,
    0xde,
    0xad,
    0xbe,
    0xef,
  ]);
}

// program 0 names the network PID (0x10), which is not a PMT
const PAT = section(0x00, [0, 0, 0xe0, 0x10, 0, 1, 0xe0 | (PMT_PID >> 8), PMT_PID & 0xff]);
const PMT = section(0x02, [
  0xe0 | (VIDEO >> 8),
  VIDEO & 0xff,
  0xf0,
  3,
  0x0e,
  1,
  0xff, // PCR PID, then a 3-byte program descriptor
  0x1b,
  0xe0 | (VIDEO >> 8),
  VIDEO & 0xff,
  0xf0,
  0,
  0x0f,
  0xe0 | (AUDIO >> 8),
  AUDIO & 0xff,
  0xf0,
  6,
  0x0a,
  4,
  0x65,
  0x6e,
  0x67,
  0, // a language descriptor
]);
const SDT = section(0x42, [0xff, 0, 1, 0xfc, 0x80, 0]);

/**
 * Segment `seq` as ffmpeg's HLS muxer lays one out: SDT, PAT, PMT (their counters go on from
 * segment to segment alike in both variants), then video and audio from a random access point.
 */
function segment(
  seq: number,
  videoCc: number,
  audioCc: number,
  audioAf: PacketSpec['af'] | 'none' = RANDOM_ACCESS,
): Buffer {
  const pes = Buffer.from([0, 0, 1, 0xe0, 0, 0, 0x80, 0x80, 5, 0x21, 0, 1, 0, 1]);
  return Buffer.concat([
    packet(SDT_PID, seq & 0x0f, { pusi: true, payload: SDT }),
    packet(0, (2 * seq) & 0x0f, { pusi: true, payload: PAT }),
    packet(PMT_PID, seq & 0x0f, { pusi: true, payload: PMT }),
    packet(VIDEO, videoCc, { pusi: true, af: RANDOM_ACCESS | 0x10, payload: pes }),
    packet(VIDEO, videoCc + 1),
    packet(AUDIO, audioCc, { pusi: true, af: audioAf === 'none' ? undefined : audioAf, payload: pes }),
    packet(VIDEO, videoCc + 2),
    packet(AUDIO, audioCc + 1),
    packet(VIDEO, videoCc + 3, { pusi: true, af: RANDOM_ACCESS, payload: pes }),
    packet(0, (2 * seq + 1) & 0x0f, { pusi: true, payload: PAT }),
    packet(VIDEO, videoCc + 4, { af: 0 }),
  ]);
}

const packetAt = (ts: Buffer, n: number) => ts.subarray(n * TS_PACKET_SIZE, (n + 1) * TS_PACKET_SIZE);
const packetsOf = (ts: Buffer) => Array.from({ length: ts.length / TS_PACKET_SIZE }, (_, n) => packetAt(ts, n));
const pidOf = (p: Buffer) => p.readUInt16BE(1) & 0x1fff;
const flagged = (p: Buffer) =>
  ((p[3] as number) & 0x20) !== 0 && (p[4] as number) > 0 && ((p[5] as number) & 0x80) !== 0;

/** libavformat/mpegts.c's continuity check, as ffmpeg runs it on a playlist's segments one after another. */
function continuityErrors(ts: Buffer): string[] {
  const last = new Map<number, number>();
  const errors: string[] = [];
  for (const p of packetsOf(ts)) {
    const pid = pidOf(p);
    const cc = (p[3] as number) & 0x0f;
    const prev = last.get(pid);
    const expected = prev === undefined ? cc : (p[3] as number) & 0x10 ? (prev + 1) & 0x0f : prev;
    if (!(pid === 0x1fff || flagged(p) || expected === cc)) errors.push(`pid ${pid} expected ${expected} got ${cc}`);
    last.set(pid, cc);
  }
  return errors;
}

describe('markDiscontinuities', () => {
  it('flags exactly the first packet of each PES PID, and leaves every other byte as it was', () => {
    const input = segment(0, 3, 9);
    const before = Buffer.from(input);
    const marks = markDiscontinuities(input, 'test');
    expect(input.equals(before)).toBe(true);
    expect(marks).toMatchObject({ flagged: 2, inserted: 0 });
    expect(marks.packets.length).toBe(input.length);
    const changed = packetsOf(marks.packets).flatMap((p, n) => (p.equals(packetAt(input, n)) ? [] : [n]));
    expect(changed).toEqual([3, 5]);
    for (const n of changed) {
      const p = packetAt(marks.packets, n);
      expect(flagged(p)).toBe(true);
      // only the indicator bit moved: the random access flag and the rest of the field stay
      expect((p[5] as number) & 0x7f).toBe((packetAt(input, n)[5] as number) & 0x7f);
      expect(p.subarray(6).equals(packetAt(input, n).subarray(6))).toBe(true);
    }
    // the later video packet with an adaptation field and PSI packets (SDT, PAT, PMT) are untouched
    expect(packetsOf(marks.packets).filter(flagged).map(pidOf)).toEqual([VIDEO, AUDIO]);
  });

  it('reads the PES PIDs from the PAT and PMT: the network PID, the SDT and the PMT are not streams', () => {
    expect([...pesPids(segment(0, 0, 0), 'test')].sort()).toEqual([VIDEO, AUDIO]);
  });

  it("makes a switch between two variants pass ffmpeg's continuity check, and changes nothing when marked again", () => {
    // variant A's second segment follows its first; B's second segment comes in with other counters
    const a0 = segment(0, 0, 0);
    const b1 = segment(1, 11, 6);
    expect(continuityErrors(Buffer.concat([a0, b1]))).toEqual([
      `pid ${VIDEO} expected 5 got 11`,
      `pid ${AUDIO} expected 2 got 6`,
    ]);
    const marked = [a0, b1].map((s) => markDiscontinuities(s, 'test').packets);
    expect(continuityErrors(Buffer.concat(marked))).toEqual([]);
    expect(markDiscontinuities(marked[1] as Buffer, 'again').packets.equals(marked[1] as Buffer)).toBe(true);
  });

  it.each([
    ['no adaptation field', 'none' as const],
    ['an empty adaptation field', 'empty' as const],
  ])('puts a flagged adaptation-field-only packet before a first packet with %s', (_, af) => {
    const input = segment(1, 3, 9, af);
    const marks = markDiscontinuities(input, 'test');
    expect(marks).toMatchObject({ flagged: 1, inserted: 1 });
    expect(marks.packets.length).toBe(input.length + TS_PACKET_SIZE);
    const inserted = packetAt(marks.packets, 5);
    expect(pidOf(inserted)).toBe(AUDIO);
    expect((inserted[1] as number) & 0x40).toBe(0);
    // adaptation field only, one counter before the packet it precedes (a packet without payload does not count)
    expect((inserted[3] as number) >> 4).toBe(0x2);
    expect((inserted[3] as number) & 0x0f).toBe(8);
    expect([inserted[4], inserted[5]]).toEqual([183, 0x80]);
    expect(inserted.subarray(6).every((b) => b === 0xff)).toBe(true);
    // without it, the input in order, the audio packet itself included; only the video's first packet was flagged
    const rest = [...packetsOf(marks.packets).slice(0, 5), ...packetsOf(marks.packets).slice(6)];
    expect(rest.flatMap((p, n) => (p.equals(packetAt(input, n)) ? [] : [n]))).toEqual([3]);
    expect(continuityErrors(Buffer.concat([segment(0, 0, 0, af), marks.packets]))).toEqual([]);
  });

  it.each([
    ['is empty', Buffer.alloc(0), /0 bytes is not a whole number of 188-byte packets/],
    [
      'is not whole packets',
      Buffer.concat([segment(0, 0, 0), Buffer.alloc(7, 0x47)]),
      /is not a whole number of 188-byte packets/,
    ],
    [
      'has a packet without the sync byte',
      Buffer.concat([segment(0, 0, 0), Buffer.alloc(TS_PACKET_SIZE, 0x46)]),
      /packet 11 does not start with the sync byte 0x47/,
    ],
    [
      'is an MP4',
      Buffer.concat([Buffer.from('\0\0\0\x20ftypisom'), Buffer.alloc(TS_PACKET_SIZE * 2 - 12)]),
      /packet 0 does not start/,
    ],
    ['has no PAT', Buffer.concat([packet(VIDEO, 0, { pusi: true, af: RANDOM_ACCESS })]), /has no PAT naming a PMT/],
  ])('refuses a buffer that %s, with a DrmError naming it', (_, input, message) => {
    expect(() => markDiscontinuities(input, 'segment 00003.ts of a')).toThrow(DrmError);
    expect(() => markDiscontinuities(input, 'segment 00003.ts of a')).toThrow(message);
    expect(() => markDiscontinuities(input, 'segment 00003.ts of a')).toThrow(/^segment 00003\.ts of a/);
  });
});

describe('the packaging post-pass over a variant ffmpeg encrypted', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-ts-disc-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('IVs are the media sequence number, 16 bytes big-endian', () => {
    expect(segmentIv(0).toString('hex')).toBe('0'.repeat(32));
    expect(segmentIv(258).toString('hex')).toBe(`${'0'.repeat(28)}0102`);
  });

  it('re-seals every segment under the same key and IV, marked, so A and B mix without a continuity error', async () => {
    const bins = mediaBinaries();
    const key = randomBytes(16);
    const keyInfo = writeKeyInfo(dir, key);
    // two encodings of one clip cut on the same 1-s grid, as variants A and B are
    for (const [name, crf] of [
      ['a', '20'],
      ['b', '40'],
    ] as const) {
      const out = path.join(dir, name);
      fs.mkdirSync(out);
      execFileSync(
        bins.ffmpeg,
        [
          '-v',
          'error',
          '-y',
          '-f',
          'lavfi',
          '-i',
          'testsrc=size=160x120:rate=25',
          '-f',
          'lavfi',
          '-i',
          'sine=frequency=440',
          '-t',
          '3',
          '-c:v',
          'libx264',
          '-crf',
          crf,
          '-preset',
          'veryfast',
          ...keyframeGridArgs(1),
          '-c:a',
          'aac',
          ...hlsMuxArgs(out, keyInfo, 1),
          playlistIn(out),
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
    }
    const plain = (name: string, n: number) => {
      const file = path.join(dir, name, (readPlaylist(playlistIn(path.join(dir, name)))[n] as { file: string }).file);
      return decryptSegment(fs.readFileSync(file), key, n);
    };
    const mixed = () => Buffer.concat([plain('a', 0), plain('b', 1), plain('a', 2)]);
    expect(continuityErrors(mixed()).length).toBeGreaterThan(0);
    const before = [0, 1, 2].map((n) => plain('b', n));

    for (const name of ['a', 'b']) {
      expect(await markVariantDiscontinuities(path.join(dir, name), key)).toMatchObject({
        segments: 3,
        flagged: 6,
        inserted: 0,
      });
    }
    expect(continuityErrors(mixed())).toEqual([]);
    // the same packets but for the two indicator bits (video, audio), sealed as any player expects
    for (const n of [0, 1, 2]) {
      const after = plain('b', n);
      const was = before[n] as Buffer;
      expect(after.length).toBe(was.length);
      expect(
        packetsOf(after)
          .flatMap((p, i) => (p.equals(packetAt(was, i)) ? [] : [pidOf(p)]))
          .sort(),
      ).toEqual([VIDEO, AUDIO]);
      expect(encryptSegment(after, key, n).equals(fs.readFileSync(path.join(dir, 'b', `0000${n}.ts`)))).toBe(true);
    }
  });
});
