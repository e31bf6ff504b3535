import { createRequire } from 'node:module';

/** The version in package.json: one folder up from the sources, two from their build in dist/. */
export const packageVersion = (): string => {
  const up = import.meta.url.includes('/dist/src/') ? '../../package.json' : '../package.json';
  return (createRequire(import.meta.url)(up) as { version: string }).version;
};

/** "drm 0.1.0": an evidence report says which software analysed a leak and which rendered the report. */
export const softwareVersion = (): string => `drm ${packageVersion()}`;
