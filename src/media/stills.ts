import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DrmError } from '../errors.js';
import type { MediaBinaries } from './binaries.js';
import { transcode } from './transcode.js';

export interface StillOptions {
  /** pixels wide (the height keeps the aspect, even) */
  width: number;
  /**
   * Seconds decoded before the picture, for inputs where a seek is not exact: in MPEG-TS ffmpeg's
   * seek lands on whatever packet is there, not on a keyframe, and nothing decodes until the next
   * one (measured: no picture at all from within a 10-s HLS segment). The input is then opened
   * this far before the time and the rest is decoded. Default 0: seek straight to the time.
   */
  preroll?: number;
  signal?: AbortSignal;
}

/**
 * One picture of a video at `seconds` from its start, as a small JPEG (the evidence report's
 * pictures, carried inline, so they are kept small).
 */
export async function jpegStill(bins: MediaBinaries, input: string, seconds: number, o: StillOptions): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-still-'));
  try {
    const out = path.join(dir, 'still.jpg');
    const from = Math.max(0, seconds - (o.preroll ?? 0));
    // yuvj420p: a grey or 10-bit picture would otherwise not fit MJPEG.
    const vf = `scale=${o.width}:-2:flags=bicubic,format=yuvj420p`;
    const args = [
      '-ss',
      from.toFixed(3),
      '-i',
      input,
      '-ss',
      (seconds - from).toFixed(3),
      '-map',
      '0:v:0',
      '-frames:v',
      '1',
      '-vf',
      vf,
      '-q:v',
      '5',
      out,
    ];
    const what = `a picture of ${path.basename(input)} at ${seconds.toFixed(1)} s`;
    await transcode(bins, args, { what, signal: o.signal });
    // A time past the last frame is no error to ffmpeg: it just writes nothing.
    if (!fs.existsSync(out)) throw new DrmError('BAD_REQUEST', `could not make ${what}: no frame there`);
    return fs.readFileSync(out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
