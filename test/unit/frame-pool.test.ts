import { describe, expect, it } from 'vitest';
import { FramePool } from '../../src/media/frame-pool.js';

// The memory a marked film's frames move through, handed out again once the encoders wrote them.
describe('frame pool', () => {
  it('hands out shared memory of the frame size, and the same memory again once given back', () => {
    const pool = new FramePool(6);
    const a = pool.take();
    expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(a.length).toBe(6);
    const b = pool.take();
    expect(b.buffer).not.toBe(a.buffer);
    pool.give(a);
    expect(pool.take()).toBe(a);
  });

  it('keeps a frame given back twice once, so that it is never handed to two users', () => {
    const pool = new FramePool(6);
    const a = pool.take();
    pool.give(a);
    pool.give(a);
    expect(pool.idleCount).toBe(1);
    expect(pool.take()).toBe(a);
    expect(pool.take()).not.toBe(a);
  });

  it('leaves memory it did not give to the garbage collector', () => {
    const pool = new FramePool(6);
    pool.give(new Uint8Array(6));
    pool.give(new Uint8Array(new SharedArrayBuffer(6)));
    pool.give(undefined);
    expect(pool.idleCount).toBe(0);
  });

  it('makes its frames where the pinning can pin them, and unpins all it pinned when closed', async () => {
    const unpinned: Uint8Array[][] = [];
    let refuse = false;
    const pool = new FramePool(6, {
      pinnedFrame: (bytes) => (refuse ? undefined : new Uint8Array(new SharedArrayBuffer(bytes + 8), 4, bytes)),
      unpin: async (frames) => {
        unpinned.push([...frames]);
      },
    });
    const a = pool.take();
    expect([a.byteOffset, a.length]).toEqual([4, 6]);
    pool.give(a);
    expect(pool.take()).toBe(a);
    refuse = true;
    const b = pool.take();
    expect([b.byteOffset, b.length]).toEqual([0, 6]);
    pool.give(b);
    expect(pool.idleCount).toBe(1);
    await pool.close();
    expect(unpinned).toEqual([[a]]);
    refuse = false;
    expect(pool.take().byteOffset).toBe(0); // once closed, nothing more is pinned
    await pool.close();
    expect(unpinned).toEqual([[a]]);
  });
});
