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

  it('pins each frame it makes once, and unpins all it pinned when closed', async () => {
    const pinned = new Set<Uint8Array>();
    const unpinned: Uint8Array[][] = [];
    let refuse = false;
    const pool = new FramePool(6, {
      pin: (frame) => !refuse && pinned.add(frame) !== undefined,
      unpin: async (frames) => {
        unpinned.push([...frames]);
      },
    });
    const a = pool.take();
    pool.give(a);
    expect(pool.take()).toBe(a);
    refuse = true;
    const b = pool.take();
    expect([...pinned]).toEqual([a]);
    await pool.close();
    expect(unpinned).toEqual([[a]]);
    expect(b.length).toBe(6);
  });
});
