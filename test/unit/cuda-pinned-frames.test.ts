import { describe, expect, it } from 'vitest';
import { CudaBackend, type CudaBackendOptions } from '../../gpu/cuda/backend.js';
import { CudaDriver } from '../../gpu/cuda/driver.js';
import { PinnedFrames } from '../../gpu/cuda/pinned-frames.js';
import { type ModulateJob, modulateFrame } from '../../gpu/modulate.js';
import { createCpuDirectBackend } from '../../gpu/cpu-direct.js';
import { FramePool } from '../../src/media/frame-pool.js';
import {
  type CudaShim,
  copyOf,
  expectLikeCpu,
  frame,
  gainsFor,
  H,
  job,
  SCHEDULES,
  shimFor,
  W,
} from '../helpers/cuda-shim.js';

// Frames from a pool that the CUDA backend page-locks: their luma goes to the device and their
// variant B comes back without staging, on the CPU shim, which counts each copy by its host memory.
let shim: CudaShim;

/** A run of two pool frames, with pool frames for B when both variants are wanted, as a marked film's are. */
function pooledRun(pool: FramePool, seed: number, want: ModulateJob['want'] = 'both') {
  const request = job([], gainsFor(seed), want);
  request.frame = frame(seed, pool.take());
  request.next = [frame(seed, pool.take())];
  if (want === 'both') request.minusInto = [pool.take(), pool.take()];
  return { request, copy: copyOf(request) };
}

async function openWithPool(options: CudaBackendOptions = {}) {
  const cuda = await CudaBackend.open({ library: shim.library, workers: 1, onWarning: () => {}, ...options });
  return { cuda, pool: new FramePool((W * H * 3) / 2, cuda.pinning) };
}

/** Launches one batch of a run of two frames takes, counted on a backend of its own. */
async function launchesPerBatch(): Promise<number> {
  const { cuda, pool } = await openWithPool();
  const before = shim.launches();
  await cuda.modulate(pooledRun(pool, 9).request);
  await Promise.all([pool.close(), cuda.close()]);
  return shim.launches() - before;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe.each(SCHEDULES)('pinned frames on the CUDA backend, with %s', (_, deferred) => {
  shimFor(deferred, (s) => {
    shim = s;
  });

  it('copies pinned frames to and from the device directly, marks them as the CPU does, and unpins them', async () => {
    const { cuda, pool } = await openWithPool({ batchFrames: 4, slots: 2 });
    const runs = [pooledRun(pool, 1), pooledRun(pool, 2), pooledRun(pool, 3, 'plus'), pooledRun(pool, 4, 'minus')];
    expect(cuda.pinning.count).toBe(12);
    const before = shim.copies();
    await Promise.all(runs.map(({ request, copy }) => expectLikeCpu(cuda.modulate(request), copy)));
    const after = shim.copies();
    // Every luma goes up from its frame, and the 4 frames marked both ways get B straight back;
    // A, and a lone variant written over its input, come back through staging.
    expect(after.registered - before.registered).toBe(8 + 4);
    expect(after.pageable - before.pageable).toBe(0);
    const live = shim.live();
    await pool.close();
    expect(cuda.pinning.count).toBe(0);
    expect(shim.live()).toBe(live - 12);
    await cuda.close();
    expect(shim.live()).toBe(0);
  });

  it('copies through staging where the driver refuses to pin, and marks the same', async () => {
    shim.refuseRegister(1);
    const { cuda, pool } = await openWithPool();
    const run = pooledRun(pool, 4);
    expect(cuda.pinning.count).toBe(0);
    expect(cuda.pinning.refusal).toMatch(/cuMemHostRegister_v2 failed/);
    const before = shim.copies();
    await expectLikeCpu(cuda.modulate(run.request), run.copy);
    expect(shim.copies().registered).toBe(before.registered);
    await Promise.all([pool.close(), cuda.close()]);
    expect(shim.live()).toBe(0);
  });

  it('redoes on the CPU, from whole input, a batch whose work was done when a later batch faulted', async () => {
    const perBatch = await launchesPerBatch();
    const { cuda, pool } = await openWithPool({ batchFrames: 2, slots: 2 });
    const runs = [pooledRun(pool, 5), pooledRun(pool, 6)];
    // Batch 1 runs whole, A waiting in its staging; batch 2 faults, and batch 1's wait (held until
    // batch 2 is queued) reports it.
    shim.faultLaunch(perBatch + 5);
    shim.waitDelay(100);
    const results = await Promise.all(runs.map(({ request }) => cuda.modulate(request)));
    // The CPU pool marks exactly as the CPU reference does, when its input is the frame as it came.
    for (const [i, { copy }] of runs.entries()) {
      const expected = await modulateFrame(createCpuDirectBackend(), copy);
      expect([results[i]?.plus, results[i]?.next?.[0]?.plus]).toEqual([expected.plus, expected.next?.[0]?.plus]);
    }
    expect(cuda.name).toMatch(/cuStreamSynchronize failed: CUDA_ERROR_LAUNCH_FAILED/);
    await pool.close();
    expect(cuda.pinning.count).toBe(0);
    await cuda.close();
    expect(shim.live()).toBe(0);
  });

  it('unpins only once the batch in flight is done, when the backend closes first', async () => {
    const { cuda, pool } = await openWithPool();
    shim.waitDelay(100);
    const before = shim.unregisteredMidWait();
    const marked = cuda.modulate(pooledRun(pool, 7).request);
    await turn(); // the batch is on its way
    const closing = cuda.close();
    await Promise.all([pool.close(), closing, marked]);
    expect(shim.unregisteredMidWait()).toBe(before);
    expect(shim.live()).toBe(0);
  });

  it('unpins only once the batch in flight is done, when another batch turned the backend to the CPU', async () => {
    const perBatch = await launchesPerBatch();
    const { cuda, pool } = await openWithPool({ batchFrames: 2, slots: 2 });
    shim.waitDelay(100);
    shim.failLaunch(perBatch + 3);
    const before = shim.unregisteredMidWait();
    const runs = [pooledRun(pool, 8), pooledRun(pool, 9)];
    const marked = runs.map(({ request, copy }) => expectLikeCpu(cuda.modulate(request), copy));
    await turn();
    await pool.close();
    expect(shim.unregisteredMidWait()).toBe(before);
    await Promise.all(marked);
    expect(cuda.name).toMatch(/after CUDA failed/);
    await cuda.close();
    expect(shim.live()).toBe(0);
  });

  it('frees every pinned frame when the backend closes before its pool', async () => {
    const { cuda, pool } = await openWithPool();
    await cuda.modulate(pooledRun(pool, 10).request);
    await cuda.close();
    expect([cuda.pinning.count, shim.live()]).toEqual([0, 0]);
    await pool.close();
  });

  it('pins each frame in memory of its own from a page boundary, up to its cap', async () => {
    const driver = await CudaDriver.load(shim.library);
    driver.open();
    const pinning = new PinnedFrames(driver, 4 * 2 ** 20);
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
