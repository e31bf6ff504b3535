/**
 * Frames in memory the driver has page-locked (cuMemHostRegister), so that a batch's lumas go to
 * the device, and variant B comes back into its frame, on the GPU's copy engines. Without it, the
 * main thread copies each luma into the slot's pinned staging and each B out of it: 4 MB of the
 * 7 MB it moves per 1080p frame, and the bound on frames per second once the kernels are fast.
 *
 * The driver locks whole pages, and refuses a range that shares a page with one already locked:
 * each frame is therefore a SharedArrayBuffer of its own, a little larger than the frame, and the
 * frame a view of it that starts on a boundary of 64 KiB (a whole number of pages on any Linux).
 * A frame is pinned once, when its pool makes it, and stays pinned while the pool reuses it; the
 * pool unpins all of them when its film is done. Where the driver refuses, or past the byte cap,
 * no frame is pinned and frames take the staging path.
 */
import type { FramePinning } from '../backend.js';
import { attemptAll, CudaError, type CudaDriver } from './driver.js';

/** Host memory kept page-locked at most: a 1080p film keeps a few hundred 3-MB frames in flight. */
const DEFAULT_CAP_BYTES = 2 * 2 ** 30;
const ALIGN = 64 * 1024;

interface Pin {
  /** where the SharedArrayBuffer starts, and where its locked range does */
  base: number;
  locked: number;
}

export class PinnedFrames implements FramePinning {
  /** held strongly: memory must outlive its registration */
  private readonly pins = new Map<ArrayBufferLike, Pin>();
  /** every batch on the device, of any lane, including lanes a failure or close has let go */
  private readonly inFlight = new Set<Promise<unknown>>();
  private bytes = 0;
  /** why no more frames are pinned: the driver's refusal (the bench reports it), or a release */
  refusal?: string;

  constructor(
    private readonly driver: CudaDriver,
    private readonly capBytes = DEFAULT_CAP_BYTES,
  ) {}

  /** A batch that may copy to or from pinned frames: unpinning waits for it. */
  track(batch: Promise<unknown>): void {
    this.inFlight.add(batch);
    const done = () => this.inFlight.delete(batch);
    batch.then(done, done);
  }

  pinnedFrame(bytes: number): Uint8Array | undefined {
    if (this.refusal !== undefined || this.bytes + bytes + 2 * ALIGN > this.capBytes) return undefined;
    const memory = new SharedArrayBuffer(bytes + 2 * ALIGN);
    const base = this.driver.addressOf(new Uint8Array(memory));
    const locked = Math.ceil(base / ALIGN) * ALIGN;
    try {
      this.driver.register(locked, Math.ceil(bytes / ALIGN) * ALIGN);
    } catch (e) {
      // A driver that cannot page-lock JS memory (or a lost device, which the next batch reports):
      // frames take the staging path from now on.
      if (!(e instanceof CudaError)) throw e;
      this.refusal = e.message;
      return undefined;
    }
    this.pins.set(memory, { base, locked });
    this.bytes += memory.byteLength;
    return new Uint8Array(memory, locked - base, bytes);
  }

  /** The device-reachable address of a pinned frame's first byte, or undefined. */
  addressOf(frame: Uint8Array): number | undefined {
    const pin = this.pins.get(frame.buffer);
    return pin === undefined ? undefined : pin.base + frame.byteOffset;
  }

  async unpin(frames: readonly Uint8Array[]): Promise<void> {
    // Forgotten first, so that no batch started from now on copies them directly; then unlocked
    // once the batches that may have (those running now) are done.
    const unlocking = this.forget(frames.map((f) => f.buffer));
    if (unlocking.length === 0) return;
    await Promise.allSettled([...this.inFlight]);
    this.unlock(unlocking);
  }

  /** Unpins everything now (closing the backend, or after a driver error, once its batches are done). */
  releaseAll(): void {
    this.refusal ??= 'the backend let its pinned memory go';
    this.unlock(this.forget([...this.pins.keys()])); // a lost device has unlocked them already
  }

  /** how many frames are pinned now (for tests and the bench) */
  get count(): number {
    return this.pins.size;
  }

  /** Drops the pins of these buffers (others are skipped): each with its memory, kept alive until unlocked. */
  private forget(memory: readonly ArrayBufferLike[]): (Pin & { memory: ArrayBufferLike })[] {
    return memory.flatMap((m) => {
      const pin = this.pins.get(m);
      if (pin === undefined) return [];
      this.pins.delete(m);
      this.bytes -= m.byteLength;
      return [{ ...pin, memory: m }];
    });
  }

  private unlock(pins: readonly Pin[]): void {
    attemptAll(pins.map((pin) => () => this.driver.unregister(pin.locked)));
  }
}
