/**
 * Frames marked per second, A and B both, through a backend: runs of two frames (the mark's default
 * δ sharing) kept in flight in a window, with frame memory handled as ingest handles it. The frames
 * come from a pool, pinned where the backend pins (ringOfFrames), and marking writes A into them in
 * place; each B goes into a pool frame that is given back once marked, as ingest gives it back
 * once encoded. The ring is larger than the window, so no frame is in two jobs at once.
 */
import { randomBytes } from 'node:crypto';
import type { DtcwtBackend } from '../../gpu/backend.js';
import { openThreadClock } from '../../gpu/thread-cpu.js';
import { FramePool } from '../../src/media/frame-pool.js';
import { yuv420Size } from '../../src/media/video-frames.js';
import {
  DEFAULT_VIDEO_MARK,
  markFrames,
  patternLength,
  segmentGains,
  segmentPattern,
} from '../../src/watermark/video/mark.js';
import { texturedFrame } from './frames.js';

export interface FrameRing {
  frames: Uint8Array[];
  pool: FramePool;
}

/** Textured frames in a pool's memory: pinned by `pinner`'s pinning, if it pins. Close the pool when done. */
export function ringOfFrames(pinner: DtcwtBackend, width: number, height: number, count: number): FrameRing {
  const pool = new FramePool(yuv420Size(width, height), pinner.pinning);
  const frames = Array.from({ length: count }, (_, i) => {
    const frame = pool.take();
    frame.set(texturedFrame(width, height, i + 1));
    return frame;
  });
  return { frames, pool };
}

export interface MarkRate {
  fps: number;
  /** the share of the wall time that Node's main thread was on a CPU (near 1: the main thread is the bound) */
  mainThreadBusy?: number;
}

export async function markFps(
  backend: DtcwtBackend,
  width: number,
  height: number,
  frames: number,
  window: number,
  ring: FrameRing,
): Promise<MarkRate> {
  const clock = openThreadClock();
  const cpuBefore = clock?.seconds() ?? 0;
  const count = patternLength(width, height, DEFAULT_VIDEO_MARK);
  const gains = [0, 1].map((s) => segmentGains(segmentPattern(randomBytes(32), 'bench-gpu', s, count)));
  const source = ring.frames;
  const started = performance.now();
  const pending: Promise<unknown>[] = [];
  for (let f = 0, run = 0; f < frames; f += 2, run++) {
    const at = (2 * run) % (source.length - 1);
    const pair = [source[at], source[at + 1]] as Uint8Array[];
    const into = [ring.pool.take(), ring.pool.take()];
    // A new segment every 125 runs (10 s at 25 fps), so batches mix gain tables as ingest's do.
    const segmentGains = gains[Math.floor(run / 125) % 2] as Float32Array;
    // A is written into the shared memory of the frames in the ring, which stay the objects the
    // pool made (a worker hands back another object over the same memory; pinning knows the first).
    const marked = markFrames(backend, pair, width, height, segmentGains, 'both', DEFAULT_VIDEO_MARK, into).then(() => {
      for (const m of into) ring.pool.give(m);
    });
    pending.push(marked);
    if (pending.length >= window) await pending.shift();
  }
  await Promise.all(pending);
  const seconds = (performance.now() - started) / 1000;
  // The thread's clock moves by scheduler ticks: a short run can read a tick more than its wall time.
  const busy = clock && Math.min(1, (clock.seconds() - cpuBefore) / seconds);
  clock?.close();
  return { fps: frames / seconds, ...(busy !== undefined && { mainThreadBusy: busy }) };
}
