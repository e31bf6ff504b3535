import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { BiortName, QshiftName } from '../../gpu/dtcwt/filters.js';

// Reference coefficients written by python3-dtcwt 0.12 Transform2d.forward (see the manifest).
const FIXTURES = new URL('../../fixtures/dtcwt/', import.meta.url);

export interface FixtureCase {
  name: string;
  biort: BiortName;
  qshift: QshiftName;
  levels: number;
  height: number;
  width: number;
  files: Record<string, { file: string; shape: number[] }>;
  reconstructionMaxAbsError: number;
}

export const dtcwtCases = (
  JSON.parse(readFileSync(new URL('manifest.json', FIXTURES), 'utf8')) as { cases: FixtureCase[] }
).cases;

/** Raw little-endian float64, row-major; copied so the Float64Array is aligned. */
export function loadArray(c: FixtureCase, key: string): { data: Float64Array; shape: number[] } {
  const entry = c.files[key];
  if (!entry) throw new Error(`fixture ${c.name} has no ${key}`);
  const bytes = readFileSync(new URL(entry.file, FIXTURES));
  const data = new Float64Array(bytes.byteLength / 8);
  for (let i = 0; i < data.length; i++) data[i] = bytes.readDoubleLE(i * 8);
  return { data, shape: entry.shape };
}

export function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] as number));
  return m;
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let e = 0;
  for (let i = 0; i < a.length; i++) e = Math.max(e, Math.abs((a[i] as number) - (b[i] as number)));
  return e;
}

/** Deterministic uniform noise in [0, 255) (mulberry32), a different pattern per seed, so failures reproduce. */
export function noise(length: number, seed: number): Float64Array {
  const out = new Float64Array(length);
  let s = seed >>> 0;
  for (let i = 0; i < length; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 255;
  }
  return out;
}
