import type { FramePinning } from '../../gpu/backend.js';

/**
 * Frames' memory, reused. A marked film moves every frame from the decoder through the mark's
 * workers to two encoders; made anew each time, a 1080p frame and its variants were 9 MB of fresh
 * memory per source frame, which V8 answered with a major collection every few frames (measured
 * on a 30-s 720p film: 140 of them, 1.2 s of the main thread and more on V8's helper threads).
 *
 * Each frame is its own SharedArrayBuffer: a worker writes the variants into it in place, so no
 * frame is copied or transferred between threads, and the pool hands it out again once the
 * encoders have written it.
 */
export class FramePool {
  private readonly free: Uint8Array[] = [];
  private readonly idle = new Set<ArrayBufferLike>();
  private readonly own = new WeakSet<ArrayBufferLike>();
  private readonly pinned: Uint8Array[] = [];
  private closed = false;

  /** pinning: a GPU backend's, which makes frames in memory it page-locks, so their copies need no staging */
  constructor(
    readonly frameBytes: number,
    private readonly pinning?: FramePinning,
  ) {}

  /** A frame of frameBytes, its contents whatever it last held. */
  take(): Uint8Array {
    const frame = this.free.pop();
    if (frame) {
      this.idle.delete(frame.buffer);
      return frame;
    }
    const pinned = this.closed ? undefined : this.pinning?.pinnedFrame(this.frameBytes);
    const made = pinned ?? new Uint8Array(new SharedArrayBuffer(this.frameBytes));
    this.own.add(made.buffer);
    if (pinned) this.pinned.push(pinned);
    return made;
  }

  /** Unpins every frame this pool pinned, once the device has finished with them; frames made later are not pinned. */
  async close(): Promise<void> {
    this.closed = true;
    const frames = this.pinned.splice(0);
    if (frames.length > 0) await this.pinning?.unpin(frames);
  }

  /**
   * Hands back a frame that take() gave, once nothing reads its memory any more. A frame that
   * went to a worker comes back as another object over the same memory: give the one take() gave.
   * Anything else is left to the garbage collector; a frame given back twice is kept once.
   */
  give(frame: Uint8Array | undefined): void {
    if (!frame || !this.own.has(frame.buffer) || this.idle.has(frame.buffer)) return;
    this.idle.add(frame.buffer);
    this.free.push(frame);
  }

  /** frames ready to hand out (for tests) */
  get idleCount(): number {
    return this.free.length;
  }
}
