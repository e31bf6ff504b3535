import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageVersion } from '../../src/version.js';
import { openApiDocument } from './document.js';

/**
 * Writes docs/openapi.json (`npm run docs:openapi`): the document a default server (`--api-shape
 * b`) serves at /openapi.json, kept in the repository so that the API reference is readable
 * without running anything. test/unit/docs.test.ts fails when it falls behind the code.
 */
export const DOCS_OPENAPI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/openapi.json');

export const docsOpenApiText = (): string =>
  `${JSON.stringify(openApiDocument({ shape: 'b', version: packageVersion() }), null, 2)}\n`;

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(DOCS_OPENAPI, docsOpenApiText());
  console.log(`docs:openapi: wrote ${path.relative(process.cwd(), DOCS_OPENAPI)}`);
}
