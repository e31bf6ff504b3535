import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CudaBackend } from '../../gpu/cuda/backend.js';
import { CudaDriver } from '../../gpu/cuda/driver.js';
import { PinnedFrames } from '../../gpu/cuda/pinned-frames.js';
import { FramePool } from '../../src/media/frame-pool.js';
import {
  type CudaShim,
  copyOf,
  expectLikeCpu,
  frame,
  gainsFor,
  H,
  job,
  loadCudaShim,
  W,
} from '../helpers/cuda-shim.js';

// Frames from a pool that the CUDA backend page-locks: their luma goes to the device and their
// variant B comes back without staging, on the CPU shim, which counts each copy by its host memory.
let shim: CudaShim;

beforeAll(() => {
  shim = loadCudaShim();
});

afterEach(() => shim.reset());

/** Runs of two pool frames, each with a pool frame for its B, as a marked film's are. */
function pooledRuns(pool: FramePool, seeds: number[]) {
  return seeds.map((seed) => {
    const request = job([], gainsFor(seed));
    request.frame = frame(seed, pool.take());
    request.next = [frame(seed, pool.take())];
    request.minusInto = [pool.take(), pool.take()];
    return { request, copy: copyOf(request) };
  });
}

describe('pinned frames on the CUDA backend', () => {
  it('copies pinned frames to and from the device directly, marks them as the CPU does, and unpins them', async () => {
    const cuda = await CudaBackend.open({ library: shim.library, batchFrames: 4, slots: 2 });
    const pool = new FramePool((W * H * 3) / 2, cuda.pinning);
    const runs = pooledRuns(pool, [1, 2, 3]);
    expect(cuda.pinning.count).toBe(12);
    const before = shim.copies();
    await Promise.all(runs.map(({ request, copy }) => expectLikeCpu(cuda.modulate(request), copy)));
    const after = shim.copies();
    // Each of the 6 frames: its luma up and its B down from its own memory; A still through staging.
    expect(after.registered - before.registered).toBe(12);
    expect(after.pageable - before.pageable).toBe(0);
    const live = shim.live();
    await pool.close();
    expect(cuda.pinning.count).toBe(0);
    expect(shim.live()).toBe(live - 12);
    await cuda.close();
    expect(shim.live()).toBe(0);
  });

  it('copies through staging where the driver refuses to pin, and marks the same', async () => {
    const cuda = await CudaBackend.open({ library: shim.library });
    shim.refuseRegister(1);
    const pool = new FramePool((W * H * 3) / 2, cuda.pinning);
    const [run] = pooledRuns(pool, [4]);
    expect(cuda.pinning.count).toBe(0);
    const before = shim.copies();
    await expectLikeCpu(cuda.modulate(run?.request as never), run?.copy as never);
    expect(shim.copies().registered).toBe(before.registered);
    await pool.close();
    await cuda.close();
    expect(shim.live()).toBe(0);
  });

  it('leaves pinned input whole when the device faults mid-batch, finishes on the CPU, and unpins all', async () => {
    const warnings: string[] = [];
    const cuda = await CudaBackend.open({ library: shim.library, workers: 1, onWarning: (m) => warnings.push(m) });
    const pool = new FramePool((W * H * 3) / 2, cuda.pinning);
    const [run] = pooledRuns(pool, [5]);
    // The lumas are up; the fault drops the later kernels and the downloads, and the wait reports it.
    shim.faultLaunch(5);
    await expectLikeCpu(cuda.modulate(run?.request as never), run?.copy as never);
    expect(warnings).toEqual([expect.stringMatching(/cuStreamSynchronize failed: CUDA_ERROR_LAUNCH_FAILED/)]);
    await pool.close();
    await cuda.close();
    expect(shim.live()).toBe(0);
  });

  it('pins each frame in memory of its own from a page boundary, up to its cap', async () => {
    const driver = await CudaDriver.load(shim.library);
    driver.open();
    const pinning = new PinnedFrames(driver, async () => {}, 4 * 2 ** 20);
    const frames = [pinning.pinnedFrame(10_000), pinning.pinnedFrame(10_000)] as Uint8Array[];
    for (const f of frames) {
      expect(driver.addressOf(f) % 65536).toBe(0);
      expect(pinning.addressOf(f)).toBe(driver.addressOf(f));
    }
    expect(frames[0]?.buffer).not.toBe(frames[1]?.buffer);
    expect(pinning.addressOf(new Uint8Array(10_000))).toBeUndefined();
    expect(pinning.pinnedFrame(4 * 2 ** 20)).toBeUndefined(); // past the cap
    expect(shim.live()).toBe(2);
    await pinning.unpin(frames);
    expect([pinning.count, shim.live()]).toEqual([0, 0]);
    driver.close();
  });
});
