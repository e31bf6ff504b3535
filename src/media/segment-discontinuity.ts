import { createCipheriv, createDecipheriv } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DrmError } from '../errors.js';
import { playlistIn, readPlaylist } from './hls.js';
import { markDiscontinuities } from './ts-discontinuity.js';

/**
 * The packaging post-pass that lets a session move between variants A and B without a continuity
 * error (see ts-discontinuity.ts): each segment ffmpeg encrypted is opened with the content key,
 * marked, and sealed again under the same key and IV, so players see the same AES-128 HLS.
 */

/** IV of the segment at `sequence`: the media sequence number as a 16-byte big-endian integer (HLS's default). */
export function segmentIv(sequence: number): Buffer {
  const iv = Buffer.alloc(16);
  iv.writeBigUInt64BE(BigInt(sequence), 8);
  return iv;
}

export function decryptSegment(sealed: Buffer, key: Buffer, sequence: number): Buffer {
  const d = createDecipheriv('aes-128-cbc', key, segmentIv(sequence));
  return Buffer.concat([d.update(sealed), d.final()]);
}

export function encryptSegment(plain: Buffer, key: Buffer, sequence: number): Buffer {
  const c = createCipheriv('aes-128-cbc', key, segmentIv(sequence));
  return Buffer.concat([c.update(plain), c.final()]);
}

export interface VariantMarks {
  segments: number;
  /** bytes of the segments as ffmpeg wrote them */
  bytes: number;
  /** PES streams' first packets flagged, and adaptation-field-only packets put before one that had no field */
  flagged: number;
  inserted: number;
}

/**
 * Marks every segment of the variant in `dir` (plain, a or b), in the playlist's order, which is
 * the media sequence the served playlists start at 0. Segments are rewritten in place: the
 * directory is staging, discarded whole if ingest fails.
 */
export async function markVariantDiscontinuities(
  dir: string,
  key: Buffer,
  signal?: AbortSignal,
): Promise<VariantMarks> {
  const total: VariantMarks = { segments: 0, bytes: 0, flagged: 0, inserted: 0 };
  const segments = readPlaylist(playlistIn(dir));
  for (const [sequence, segment] of segments.entries()) {
    signal?.throwIfAborted();
    const file = path.join(dir, segment.file);
    const label = `segment ${segment.file} of ${path.basename(dir)}`;
    const sealed = await fs.readFile(file);
    let plain: Buffer;
    try {
      plain = decryptSegment(sealed, key, sequence);
    } catch (err) {
      throw new DrmError('INTERNAL_ERROR', `${label} does not decrypt with the content key and IV ${sequence}`, {
        cause: err,
      });
    }
    const marks = markDiscontinuities(plain, label);
    await fs.writeFile(file, encryptSegment(marks.packets, key, sequence));
    total.segments++;
    total.bytes += sealed.length;
    total.flagged += marks.flagged;
    total.inserted += marks.inserted;
  }
  return total;
}
