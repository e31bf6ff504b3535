import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DrmError } from './errors.js';

let version: string | undefined;

/**
 * The version in drm's package.json, found upwards from this module: one folder up from the
 * sources, one from the bundle in dist/ (wherever the bundler put this code).
 */
export const packageVersion = (): string => {
  if (version) return version;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    const pkg = fs.existsSync(file)
      ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string })
      : {};
    if (pkg.name === 'drm' && pkg.version) {
      version = pkg.version;
      return version;
    }
    const up = path.dirname(dir);
    if (up === dir)
      throw new DrmError('INTERNAL_ERROR', `drm's package.json is not above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
};

/** "drm 0.1.0": an evidence report says which software analysed a leak and which rendered the report. */
export const softwareVersion = (): string => `drm ${packageVersion()}`;
