import { describe, expect, it } from 'vitest';
import { rectOnto } from '../../src/watermark/video/homography.js';
import { insetRect, restoreLeak } from '../../src/watermark/video/restore.js';

const W = 64;
const H = 36;
const identity = Uint8Array.from({ length: 256 }, (_, v) => v);
/** A smooth picture (linear, so bilinear sampling reproduces it exactly). */
const ramp = (x: number, y: number) => 20 + 1.5 * x + 2.25 * y;

describe('putting a leak frame back into the original for scoring', () => {
  it('samples the proxy where the rectangle puts each reference pixel, and keeps the original outside it', () => {
    // The leak shows the original's rectangle (10, 5, 40 × 20), stretched over its whole frame.
    const rect = { x: 10, y: 5, w: 40, h: 20 };
    const proxy = new Float32Array(W * H);
    for (let v = 0; v < H; v++)
      for (let u = 0; u < W; u++)
        proxy[v * W + u] = ramp(rect.x + ((u + 0.5) / W) * rect.w - 0.5, rect.y + ((v + 0.5) / H) * rect.h - 0.5);
    const original = new Float32Array(W * H).fill(7);
    const inside = insetRect(rect, 2, W, H);
    expect(inside).toEqual({ x: 12, y: 7, w: 36, h: 16 });
    const active = { x: 0, y: 0, w: W, h: H };
    const out = restoreLeak(proxy, original, W, H, { active, map: rectOnto(rect, active), inside, tone: identity });
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const within = x >= inside.x && x < inside.x + inside.w && y >= inside.y && y < inside.y + inside.h;
        expect(out[y * W + x], `(${x}, ${y})`).toBeCloseTo(within ? ramp(x, y) : 7, 3);
      }
    }
  });

  it('reads only the active picture of a letterboxed leak, and maps its tones back with their fractions', () => {
    // Black bars of 6 proxy rows above and below; the picture between them is the whole original, darkened by 10.
    const active = { x: 0, y: 6, w: W, h: H - 12 };
    const proxy = new Float32Array(W * H);
    for (let v = active.y; v < active.y + active.h; v++) {
      for (let u = 0; u < W; u++)
        proxy[v * W + u] = ramp(((u + 0.5) / W) * W - 0.5, ((v - active.y + 0.5) / active.h) * H - 0.5) - 10;
    }
    const brighten = Uint8Array.from({ length: 256 }, (_, v) => Math.min(255, v + 10));
    const rect = { x: 0, y: 0, w: W, h: H };
    const out = restoreLeak(proxy, new Float32Array(W * H), W, H, {
      active,
      map: rectOnto(rect, active),
      inside: insetRect(rect, 2, W, H),
      tone: brighten,
    });
    for (const [x, y] of [
      [2, 2],
      [30, 17],
      [61, 33],
      [45, 9],
    ] as const)
      expect(out[y * W + x], `(${x}, ${y})`).toBeCloseTo(ramp(x, y), 2);
  });
});
