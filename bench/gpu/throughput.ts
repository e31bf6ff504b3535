/**
 * Frames marked per second, A and B both, through a backend: runs of two frames (the mark's default
 * δ sharing) kept in flight in a window, as ingest keeps them. Frames come from a ring larger than
 * the window, so no frame is in two jobs at once; marking writes into them, as it does in ingest,
 * and each variant B is a new frame, as ingest's are.
 */
import { randomBytes } from 'node:crypto';
import type { DtcwtBackend } from '../../gpu/backend.js';
import {
  DEFAULT_VIDEO_MARK,
  markFrames,
  patternLength,
  segmentGains,
  segmentPattern,
} from '../../src/watermark/video/mark.js';
import { texturedFrames } from './frames.js';

export async function markFps(
  backend: DtcwtBackend,
  width: number,
  height: number,
  frames: number,
  window: number,
  ring = texturedFrames(width, height, 2 * window + 2),
): Promise<number> {
  const count = patternLength(width, height, DEFAULT_VIDEO_MARK);
  const gains = [0, 1].map((s) => segmentGains(segmentPattern(randomBytes(32), 'bench-gpu', s, count)));
  const started = performance.now();
  const pending: Promise<unknown>[] = [];
  for (let f = 0, run = 0; f < frames; f += 2, run++) {
    const at = (2 * run) % (ring.length - 1);
    const pair = [ring[at], ring[at + 1]] as Uint8Array[];
    // A new segment every 125 runs (10 s at 25 fps), so batches mix gain tables as ingest's do.
    const segmentGains = gains[Math.floor(run / 125) % 2] as Float32Array;
    // The pool moves frames to its workers and back: the ring keeps the frames that came back.
    const marked = markFrames(backend, pair, width, height, segmentGains, 'both').then(([a, b]) => {
      ring[at] = a?.A as Uint8Array;
      ring[at + 1] = b?.A as Uint8Array;
    });
    pending.push(marked);
    if (pending.length >= window) await pending.shift();
  }
  await Promise.all(pending);
  return frames / ((performance.now() - started) / 1000);
}
