/**
 * Frames whose memory the driver has page-locked (cuMemHostRegister), so that a batch's lumas go to
 * the device, and variant B comes back into its frame, on the GPU's copy engines. Without it, the
 * main thread copies each luma into the slot's pinned staging and each B out of it: 4 MB of the
 * 7 MB it moves per 1080p frame, and the bound on frames per second once the kernels are fast.
 *
 * A frame is pinned once, when its pool makes it, and stays pinned while the pool reuses it; the
 * pool unpins all of them when its film is done. Pinning is an optimisation: where the driver
 * refuses it, or past the byte cap, a frame takes the staging path as before.
 */
import type { FramePinning } from '../backend.js';
import { attemptAll, CudaError, type CudaDriver } from './driver.js';

/** Host memory kept page-locked at most: a 1080p film keeps a few hundred 3-MB frames in flight. */
const DEFAULT_CAP_BYTES = 2 * 2 ** 30;

export class PinnedFrames implements FramePinning {
  /** a pinned frame's memory and its address; held strongly, since memory must outlive its registration */
  private readonly addresses = new Map<ArrayBufferLike, number>();
  private bytes = 0;
  private refused = false;

  constructor(
    private readonly driver: CudaDriver,
    /** resolves once no copy that may touch a pinned frame is in flight */
    private readonly settle: () => Promise<void>,
    private readonly capBytes = DEFAULT_CAP_BYTES,
  ) {}

  /** Only whole SharedArrayBuffers: their memory never moves, and a pool keeps them alive while pinned. */
  pin(frame: Uint8Array): boolean {
    const memory = frame.buffer;
    if (this.addresses.has(memory)) return true;
    const whole = frame.byteOffset === 0 && frame.byteLength === memory.byteLength;
    if (this.refused || !(memory instanceof SharedArrayBuffer) || !whole) return false;
    if (this.bytes + frame.byteLength > this.capBytes) return false;
    try {
      this.addresses.set(memory, this.driver.register(frame));
      this.bytes += frame.byteLength;
      return true;
    } catch (e) {
      // A driver that cannot page-lock JS memory (or a lost device, which the next batch reports):
      // frames take the staging path from now on.
      if (!(e instanceof CudaError)) throw e;
      this.refused = true;
      return false;
    }
  }

  /** The device-reachable address of a pinned frame's first byte, or undefined. */
  addressOf(frame: Uint8Array): number | undefined {
    const base = this.addresses.get(frame.buffer);
    return base === undefined ? undefined : base + frame.byteOffset;
  }

  async unpin(frames: readonly Uint8Array[]): Promise<void> {
    // Forgotten first, so that no batch started from now on copies them directly; then unlocked
    // once the batches that may have (those running now) are done.
    // Each address with its memory, which must stay alive until it is unlocked.
    const unlocking = frames.flatMap((f) => this.forget(f.buffer) ?? []);
    if (unlocking.length === 0) return;
    await this.settle();
    attemptAll(
      unlocking.map(
        ([address]) =>
          () =>
            this.driver.unregister(address),
      ),
    );
  }

  /** Unpins everything now (closing the backend, or after a driver error, once its batches are done). */
  releaseAll(): void {
    this.refused = true;
    const unlocking = [...this.addresses.keys()].flatMap((m) => this.forget(m) ?? []);
    // a lost device has unlocked them already
    attemptAll(
      unlocking.map(
        ([address]) =>
          () =>
            this.driver.unregister(address),
      ),
    );
  }

  /** how many frames are pinned now (for tests and the bench) */
  get count(): number {
    return this.addresses.size;
  }

  private forget(memory: ArrayBufferLike): [[number, ArrayBufferLike]] | undefined {
    const address = this.addresses.get(memory);
    if (address === undefined) return undefined;
    this.addresses.delete(memory);
    this.bytes -= memory.byteLength;
    return [[address, memory]];
  }
}
