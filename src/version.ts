import { createRequire } from 'node:module';

/**
 * drm's version as package.json names it, read once: an evidence report says which software
 * analysed a leak and which rendered the report (the sources run unbundled, so the file is there).
 */
let cached: string | undefined;

export function softwareVersion(): string {
  cached ??= `drm ${(createRequire(import.meta.url)('../package.json') as { version: string }).version}`;
  return cached;
}
