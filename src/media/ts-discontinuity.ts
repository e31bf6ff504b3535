import { DrmError } from '../errors.js';

/**
 * MPEG-TS continuity across a switch between variants A and B. A session takes segment s from A
 * or B by a bit of the viewer's id, but the two variants were muxed apart, so each PES stream's
 * continuity counter (CC) jumps where a session moves from one to the other, and a demuxer that
 * checks CCs (ffmpeg's) flags the first packet after the jump as corrupt. ISO/IEC 13818-1 has a
 * flag for exactly this: a packet whose adaptation field carries the discontinuity_indicator may
 * have any CC. Setting it on the first packet of every PES stream in every segment makes each
 * segment a valid continuation of any other, whichever variant came before. On the PCR's PID the
 * flag also announces that the system time base may restart at the next PCR; A and B are cut on
 * one grid with the same timestamps, so a player that resynchronises finds the same clock.
 */

export const TS_PACKET_SIZE = 188;
const SYNC_BYTE = 0x47;
const PAT_PID = 0;
const DISCONTINUITY = 0x80;

export interface DiscontinuityMarks {
  /** the segment's packets with the marks set (a copy: the input is left as it was) */
  packets: Buffer;
  /** PES PIDs whose first packet already had an adaptation field, now flagged */
  flagged: number;
  /** PES PIDs whose first packet had none, so an adaptation-field-only packet was put before it */
  inserted: number;
}

const pidOf = (ts: Buffer, at: number): number => ts.readUInt16BE(at + 1) & 0x1fff;
/** The 12-bit length that follows 4 reserved bits (section_length, program_info_length, ES_info_length). */
const length12 = (b: Buffer, at: number): number => b.readUInt16BE(at) & 0x0fff;
const startsUnit = (ts: Buffer, at: number): boolean => ((ts[at + 1] as number) & 0x40) !== 0;
const hasAdaptation = (ts: Buffer, at: number): boolean => ((ts[at + 3] as number) & 0x20) !== 0;
const hasPayload = (ts: Buffer, at: number): boolean => ((ts[at + 3] as number) & 0x10) !== 0;

/** Refuses anything that is not whole 188-byte packets, each opening with the sync byte. */
export function checkTransportStream(ts: Buffer, label: string): void {
  if (ts.length === 0 || ts.length % TS_PACKET_SIZE !== 0) {
    throw new DrmError(
      'INTERNAL_ERROR',
      `${label} is not MPEG-TS: ${ts.length} bytes is not a whole number of 188-byte packets`,
    );
  }
  for (let at = 0; at < ts.length; at += TS_PACKET_SIZE) {
    if (ts[at] !== SYNC_BYTE) {
      throw new DrmError(
        'INTERNAL_ERROR',
        `${label} is not MPEG-TS: packet ${at / TS_PACKET_SIZE} does not start with the sync byte 0x47`,
      );
    }
  }
}

/** The section a packet starts (PUSI set: the payload opens with a pointer field), if it fits in the packet. */
function sectionIn(ts: Buffer, at: number, label: string): Buffer | undefined {
  if (!startsUnit(ts, at) || !hasPayload(ts, at)) return undefined;
  const packetEnd = at + TS_PACKET_SIZE;
  const payload = at + 4 + (hasAdaptation(ts, at) ? 1 + (ts[at + 4] as number) : 0);
  const start = payload < packetEnd ? payload + 1 + (ts[payload] as number) : packetEnd;
  const end = start + 3 <= packetEnd ? start + 3 + length12(ts, start + 1) : Number.POSITIVE_INFINITY;
  // ffmpeg writes its PAT and PMT in one packet each; a table split over packets is not ours.
  if (end > packetEnd)
    throw new DrmError(
      'INTERNAL_ERROR',
      `${label}: the PSI section in packet ${at / TS_PACKET_SIZE} does not fit in it`,
    );
  return ts.subarray(start, end);
}

/** PMT PIDs of the PAT's programs (program 0 names the network PID, not a PMT). */
function pmtPids(pat: Buffer): number[] {
  const pids: number[] = [];
  // 8 bytes of section header before the entries, 4 of CRC after them
  for (let e = 8; e + 4 <= pat.length - 4; e += 4) {
    if (pat.readUInt16BE(e) !== 0) pids.push(pat.readUInt16BE(e + 2) & 0x1fff);
  }
  return pids;
}

/** Elementary stream PIDs a PMT lists. */
function elementaryPids(pmt: Buffer): number[] {
  const pids: number[] = [];
  if (pmt.length < 16) return pids;
  // after the section header and PCR_PID, the program's descriptors, then 5 bytes and descriptors a stream
  for (let e = 12 + length12(pmt, 10); e + 5 <= pmt.length - 4; e += 5 + length12(pmt, e + 3)) {
    pids.push(pmt.readUInt16BE(e + 1) & 0x1fff);
  }
  return pids;
}

/**
 * The PES PIDs of a segment, read from its own PAT and PMTs (ffmpeg's HLS muxer repeats both at
 * the start of every segment). PSI and other PIDs (PAT, PMT, SDT, null) are not PES streams.
 */
export function pesPids(ts: Buffer, label: string): Set<number> {
  const tables = (pids: ReadonlySet<number>, tableId: number): Buffer[] => {
    const found: Buffer[] = [];
    for (let at = 0; at < ts.length; at += TS_PACKET_SIZE) {
      if (!pids.has(pidOf(ts, at))) continue;
      const section = sectionIn(ts, at, label);
      if (section && section[0] === tableId) found.push(section);
    }
    return found;
  };
  const pmts = new Set(tables(new Set([PAT_PID]), 0x00).flatMap(pmtPids));
  if (pmts.size === 0)
    throw new DrmError('INTERNAL_ERROR', `${label} has no PAT naming a PMT: its streams cannot be told apart`);
  return new Set(tables(pmts, 0x02).flatMap(elementaryPids));
}

/**
 * A packet of `like`'s PID that is all adaptation field, with the discontinuity indicator set.
 * It carries no payload, so it does not count in the CC: giving it the CC before `like`'s keeps
 * `like` in order after it.
 */
function discontinuityPacket(like: Buffer): Buffer {
  const p = Buffer.alloc(TS_PACKET_SIZE, 0xff);
  p[0] = SYNC_BYTE;
  p[1] = (like[1] as number) & 0x1f; // no TEI, no PUSI, no priority
  p[2] = like[2] as number;
  p[3] = 0x20 | (((like[3] as number) - 1) & 0x0f); // not scrambled, adaptation field only
  p[4] = TS_PACKET_SIZE - 5; // the field fills the packet: its flags byte, then stuffing
  p[5] = DISCONTINUITY;
  return p;
}

/**
 * Sets the discontinuity indicator on the first packet of each PES PID in a segment (pure: the
 * input is not changed). That packet starts a PES at a random access point and so normally
 * already has an adaptation field with a flags byte; the flag costs one bit. Where it has none
 * (or an empty one), room for it could only come from moving the payload along the following
 * packets, so an adaptation-field-only packet carrying the flag goes before it instead.
 */
export function markDiscontinuities(ts: Buffer, label: string): DiscontinuityMarks {
  checkTransportStream(ts, label);
  const pes = pesPids(ts, label);
  const packets = Buffer.from(ts);
  const insertBefore: number[] = [];
  let flagged = 0;
  for (let at = 0; at < packets.length && pes.size > 0; at += TS_PACKET_SIZE) {
    const pid = pidOf(packets, at);
    if (!pes.delete(pid)) continue;
    if (hasAdaptation(packets, at) && (packets[at + 4] as number) > 0) {
      packets[at + 5] = (packets[at + 5] as number) | DISCONTINUITY;
      flagged++;
    } else insertBefore.push(at);
  }
  if (insertBefore.length === 0) return { packets, flagged, inserted: 0 };
  const pieces: Buffer[] = [];
  let from = 0;
  for (const at of insertBefore) {
    pieces.push(packets.subarray(from, at), discontinuityPacket(packets.subarray(at, at + TS_PACKET_SIZE)));
    from = at;
  }
  pieces.push(packets.subarray(from));
  return { packets: Buffer.concat(pieces), flagged, inserted: insertBefore.length };
}
