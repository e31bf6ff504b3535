import { createHmac } from 'node:crypto';
import { deriveKey } from '../crypto/secret.js';

/**
 * The watermark's secret randomness. Each (content, segment, purpose) gets its own 128-bit seed,
 * an HMAC under a key derived from the server secret, so patterns are repeatable by the detector,
 * independent between segments and contents, and unpredictable to anyone without the secret.
 * The numbers come from xoshiro128** (fast, 2^128 - 1 period, good equidistribution), which is
 * ample for spreading a mark; the secrecy rests on the HMAC seed, not on the generator.
 */
export function watermarkKey(serverSecret: Buffer): Buffer {
  return deriveKey(serverSecret, 'watermark');
}

export function segmentSeed(key: Buffer, contentId: string, segment: number, purpose: string): Uint32Array {
  if (!Number.isInteger(segment) || segment < 0) throw new Error(`segment must be a whole number, got ${segment}`);
  const mac = createHmac('sha256', key).update(`${purpose}\0${contentId}\0${segment}`).digest();
  const seed = new Uint32Array(4);
  for (let i = 0; i < 4; i++) seed[i] = mac.readUInt32LE(i * 4);
  // xoshiro must not start from all zeros (a 2^-128 chance, made impossible here).
  if (seed.every((v) => v === 0)) seed[0] = 1;
  return seed;
}

export class KeyedRandom {
  private readonly s: Uint32Array;

  constructor(seed: Uint32Array) {
    this.s = Uint32Array.from(seed);
  }

  /** The next 32 random bits as an unsigned integer (xoshiro128**). */
  nextUint32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1] as number, 5), 7), 9) >>> 0;
    const t = (s[1] as number) << 9;
    s[2] = (s[2] as number) ^ (s[0] as number);
    s[3] = (s[3] as number) ^ (s[1] as number);
    s[1] = (s[1] as number) ^ (s[2] as number);
    s[0] = (s[0] as number) ^ (s[3] as number);
    s[2] = (s[2] as number) ^ t;
    s[3] = rotl(s[3] as number, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** n values of +1 or -1, each equally likely: the usual spread-spectrum pattern. */
  signs(n: number): Float32Array {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i += 32) {
      let bits = this.nextUint32();
      for (let j = i; j < Math.min(n, i + 32); j++) {
        out[j] = bits & 1 ? 1 : -1;
        bits >>>= 1;
      }
    }
    return out;
  }

  /** n standard normal values (Box–Muller). */
  gaussians(n: number): Float32Array {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i += 2) {
      const u = 1 - this.next();
      const v = this.next();
      const r = Math.sqrt(-2 * Math.log(u));
      out[i] = r * Math.cos(2 * Math.PI * v);
      if (i + 1 < n) out[i + 1] = r * Math.sin(2 * Math.PI * v);
    }
    return out;
  }
}

const rotl = (x: number, k: number) => ((x << k) | (x >>> (32 - k))) >>> 0;

/** The pattern source for one segment of one content item. */
export function segmentRandom(key: Buffer, contentId: string, segment: number, purpose: string): KeyedRandom {
  return new KeyedRandom(segmentSeed(key, contentId, segment, purpose));
}
