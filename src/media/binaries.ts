import { createRequire } from 'node:module';

/**
 * Where ffmpeg and ffprobe are: DRM_FFMPEG / DRM_FFPROBE when set (a system build), otherwise
 * the static builds that @ffmpeg-installer and @ffprobe-installer ship inside npm packages, so
 * that `npm install` is all the set-up.
 */
export interface MediaBinaries {
  ffmpeg: string;
  ffprobe: string;
}

export function mediaBinaries(env: NodeJS.ProcessEnv = process.env): MediaBinaries {
  const require = createRequire(import.meta.url);
  const shipped = (pkg: string) => (require(pkg) as { path: string }).path;
  return {
    ffmpeg: env.DRM_FFMPEG ?? shipped('@ffmpeg-installer/ffmpeg'),
    ffprobe: env.DRM_FFPROBE ?? shipped('@ffprobe-installer/ffprobe'),
  };
}
