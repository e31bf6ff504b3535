import type { MediaInfo } from '../src/media/probe.js';

/**
 * ffmpeg input and output options (the output file goes last) for a long film made of a short
 * clip: the clip played over and over to `seconds`, each pass flipped or zoomed its own way, so
 * that the film never repeats a picture, as a real one does not. A plain loop would leave a time
 * alignment nothing to tell one pass from another. x264 ultrafast CRF 14: a source, made quickly.
 */
export function filmArgs(clip: string, info: MediaInfo, seconds: number): string[] {
  const video = info.video;
  if (!video) throw new Error(`${clip} has no video`);
  const passes = Math.ceil(seconds / info.duration);
  const flips = ['', 'hflip,', 'vflip,', 'hflip,vflip,'];
  const zooms = ['', 'crop=iw*0.8:ih*0.8:0:0,', 'crop=iw*0.8:ih*0.8:iw*0.2:ih*0.2,'];
  const inputs = Array.from({ length: passes }, () => ['-i', clip]).flat();
  const views = Array.from(
    { length: passes },
    (_, k) =>
      `[${k}:v:0]${flips[k % 4]}${zooms[Math.floor(k / 4) % 3]}scale=${video.width}:${video.height},setsar=1[v${k}]`,
  );
  const graph = `${views.join(';')};${views.map((_, k) => `[v${k}]`).join('')}concat=n=${passes}:v=1:a=0[film]`;
  return [
    ...inputs,
    '-filter_complex',
    graph,
    '-map',
    '[film]',
    '-t',
    String(seconds),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '14',
    '-pix_fmt',
    'yuv420p',
  ];
}
