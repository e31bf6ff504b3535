import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCS_OPENAPI, docsOpenApiText } from '../../server/openapi/write-docs.js';

// Issue 20, point 7: the API reference is readable from the repository itself, and stays true.

const ROOT = path.resolve(__dirname, '../..');
const SHARED_SPEC = path.resolve(ROOT, '../shared/spec/interface-spec.md');

describe('the API reference in docs/', () => {
  it('holds the OpenAPI document a default server serves (npm run docs:openapi writes it again)', () => {
    expect(fs.readFileSync(DOCS_OPENAPI, 'utf8')).toBe(docsOpenApiText());
  });

  it.runIf(fs.existsSync(SHARED_SPEC))('holds the interface spec as it is beside the repository', () => {
    expect(fs.readFileSync(path.join(ROOT, 'docs/interface-spec.md'), 'utf8')).toBe(
      fs.readFileSync(SHARED_SPEC, 'utf8'),
    );
  });
});
