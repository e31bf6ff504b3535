import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileWat, generatedName, moduleSource } from '../../gpu/wasm/build.js';

const dir = path.join(import.meta.dirname, '../../gpu/wasm');

describe('WebAssembly kernels', () => {
  const sources = fs.readdirSync(dir).filter((f) => f.endsWith('.wat'));

  it('has kernels to check', () => {
    expect(sources.length).toBeGreaterThan(0);
  });

  it.each(sources)('%s is compiled into the committed module (npm run build:wasm)', async (name) => {
    const bytes = await compileWat(path.join(dir, name));
    expect(WebAssembly.validate(bytes)).toBe(true);
    expect(fs.readFileSync(path.join(dir, generatedName(name)), 'utf8')).toBe(moduleSource(name, bytes));
  });
});
