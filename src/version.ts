import { createRequire } from 'node:module';

/** The version in package.json (the sources run unbundled, so the file is one folder up). */
export const packageVersion = (): string => (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/** "drm 0.1.0": an evidence report says which software analysed a leak and which rendered the report. */
export const softwareVersion = (): string => `drm ${packageVersion()}`;
