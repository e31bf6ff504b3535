/**
 * Where a leak's picture sits in the original. A leak may be scaled, slightly cropped (and
 * scaled back up) or letterboxed: after its black bars are cut off (`active`, in leak pixels),
 * what remains is a uniformly scaled view of a rectangle of the original (`rect`, in original
 * pixels). The search below finds that rectangle by normalized cross-correlation of small
 * grey pictures, coarse to fine.
 */
export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A grey picture at some scale of its source: the data and how many source pixels one pixel spans. */
export interface Picture {
  data: Uint8Array | Float32Array;
  width: number;
  height: number;
}

/** Samples `pic` (a downscaled copy of a source of sourceWidth pixels) at source coordinates. */
function sampler(pic: Picture, sourceWidth: number) {
  const f = pic.width / sourceWidth;
  return (x: number, y: number): number => {
    const u = Math.min(pic.width - 1, Math.max(0, (x + 0.5) * f - 0.5));
    const v = Math.min(pic.height - 1, Math.max(0, (y + 0.5) * f - 0.5));
    const i = Math.floor(u);
    const j = Math.floor(v);
    const i1 = Math.min(pic.width - 1, i + 1);
    const j1 = Math.min(pic.height - 1, j + 1);
    const a = u - i;
    const b = v - j;
    const d = pic.data;
    const top = (d[j * pic.width + i] as number) * (1 - a) + (d[j * pic.width + i1] as number) * a;
    const bottom = (d[j1 * pic.width + i] as number) * (1 - a) + (d[j1 * pic.width + i1] as number) * a;
    return top * (1 - b) + bottom * b;
  };
}

/** The original seen through `rect`, sampled on the grid of a leak picture of width × height. */
export function viewThrough(original: Picture, originalWidth: number, rect: Rect, width: number, height: number): Float32Array {
  const at = sampler(original, originalWidth);
  const out = new Float32Array(width * height);
  for (let v = 0; v < height; v++) {
    const y = rect.y + ((v + 0.5) / height) * rect.h - 0.5;
    for (let u = 0; u < width; u++) out[v * width + u] = at(rect.x + ((u + 0.5) / width) * rect.w - 0.5, y);
  }
  return out;
}

/** Area-average resize of a grey picture (for making the search's small pictures from full frames). */
export function resizeArea(data: Uint8Array, width: number, height: number, region: Rect, outWidth: number, outHeight: number): Float32Array {
  const out = new Float32Array(outWidth * outHeight);
  for (let v = 0; v < outHeight; v++) {
    const y0 = Math.floor(region.y + (v * region.h) / outHeight);
    const y1 = Math.min(height, Math.max(y0 + 1, Math.floor(region.y + ((v + 1) * region.h) / outHeight)));
    for (let u = 0; u < outWidth; u++) {
      const x0 = Math.floor(region.x + (u * region.w) / outWidth);
      const x1 = Math.min(width, Math.max(x0 + 1, Math.floor(region.x + ((u + 1) * region.w) / outWidth)));
      let sum = 0;
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) sum += data[y * width + x] as number;
      out[v * outWidth + u] = sum / ((y1 - y0) * (x1 - x0));
    }
  }
  return out;
}

/** Normalized cross-correlation of two pictures of the same size (1: equal up to brightness and contrast). */
export function correlation(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sa = 0;
  let sb = 0;
  let saa = 0;
  let sbb = 0;
  let sab = 0;
  const n = a.length;
  for (let i = 0; i < n; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    sa += x;
    sb += y;
    saa += x * x;
    sbb += y * y;
    sab += x * y;
  }
  const den = Math.sqrt((saa - (sa * sa) / n) * (sbb - (sb * sb) / n));
  return den > 0 ? (sab - (sa * sb) / n) / den : 0;
}

/**
 * Normalized cross-correlation between leak pictures (each the whole active area) and the
 * matching original pictures seen through `rect`. 1 is a perfect match up to brightness and contrast.
 */
export function rectScore(pairs: ReadonlyArray<{ leak: Picture; original: Picture }>, originalWidth: number, rect: Rect, step = 1): number {
  let total = 0;
  for (const { leak, original } of pairs) {
    const at = sampler(original, originalWidth);
    let sl = 0;
    let so = 0;
    let sll = 0;
    let soo = 0;
    let slo = 0;
    let n = 0;
    for (let v = 0; v < leak.height; v += step) {
      const y = rect.y + ((v + 0.5) / leak.height) * rect.h - 0.5;
      for (let u = 0; u < leak.width; u += step) {
        const x = rect.x + ((u + 0.5) / leak.width) * rect.w - 0.5;
        const l = leak.data[v * leak.width + u] as number;
        const o = at(x, y);
        sl += l;
        so += o;
        sll += l * l;
        soo += o * o;
        slo += l * o;
        n++;
      }
    }
    const cov = slo - (sl * so) / n;
    const den = Math.sqrt((sll - (sl * sl) / n) * (soo - (so * so) / n));
    total += den > 0 ? cov / den : 0;
  }
  return total / pairs.length;
}

/**
 * The rectangle of the original (width × height) that the leak's active area shows. Coarse: every
 * scale from minScale to 1 in steps of 1%, with the active area's aspect, at positions two
 * picture pixels apart, comparing every fourth pixel. Fine: centre and scale in halving steps,
 * comparing every pixel. Returns the rectangle and its score.
 */
export function findRect(
  pairs: ReadonlyArray<{ leak: Picture; original: Picture }>,
  width: number,
  height: number,
  activeAspect: number,
  minScale = 0.8,
): { rect: Rect; score: number } {
  // An aspect far from the original's means the leak was stretched, not cropped: keep the whole frame's.
  const uniform = Math.abs(activeAspect / (height / width) - 1) < 0.06;
  const centred = (s: number, cx: number, cy: number): Rect => {
    const w = s * width;
    const h = uniform ? w * activeAspect : s * height;
    return { x: cx - w / 2, y: cy - h / 2, w, h };
  };
  const fits = (r: Rect) => r.w <= width + 1e-6 && r.h <= height + 1e-6 && r.x >= -1e-6 && r.y >= -1e-6 && r.x + r.w <= width + 1e-6 && r.y + r.h <= height + 1e-6;
  const px = width / (pairs[0]?.original.width ?? 160);

  let coarse: { rect: Rect; score: number } = { rect: centred(1, width / 2, height / 2), score: -2 };
  for (let s = 1; s >= minScale - 1e-9; s -= 0.01) {
    const r0 = centred(s, 0, 0);
    const xs = [(width - r0.w) / 2];
    const ys = [(height - r0.h) / 2];
    for (let x = 0; x + r0.w <= width + 1e-6; x += 2 * px) xs.push(x);
    for (let y = 0; y + r0.h <= height + 1e-6; y += 2 * px) ys.push(y);
    for (const y of ys) {
      for (const x of xs) {
        const r = { x, y, w: r0.w, h: r0.h };
        if (!fits(r)) continue;
        const score = rectScore(pairs, width, r, 4);
        if (score > coarse.score) coarse = { rect: r, score };
      }
    }
  }

  let best = { rect: coarse.rect, score: rectScore(pairs, width, coarse.rect, 1) };
  for (let delta = px, ds = 0.005, moves = 0; delta > px / 16; moves++) {
    const c = best.rect;
    const s0 = c.w / width;
    const cx = c.x + c.w / 2;
    const cy = c.y + c.h / 2;
    for (const s of [s0 - ds, s0, s0 + ds]) {
      for (const dy of [-delta, 0, delta]) {
        for (const dx of [-delta, 0, delta]) {
          if (s === s0 && dx === 0 && dy === 0) continue;
          const r = centred(s, cx + dx, cy + dy);
          if (!fits(r)) continue;
          const score = rectScore(pairs, width, r, 1);
          if (score > best.score) best = { rect: r, score };
        }
      }
    }
    // Stay at this step while it still improves (a few moves at most), then halve it.
    if (best.rect === c || moves >= 3) {
      delta /= 2;
      ds /= 2;
      moves = -1;
    }
  }
  // The untouched frame, when it scores as well, is the answer: a leak is far more often only
  // re-encoded or scaled than cropped, and a sub-pixel fit to coding noise would misplace it.
  const whole = { x: 0, y: 0, w: width, h: height };
  if (fits(whole) && Math.abs(activeAspect / (height / width) - 1) < 0.01) {
    const score = rectScore(pairs, width, whole, 1);
    if (score >= best.score - 0.002) return { rect: whole, score };
  }
  return best;
}
