import path from 'node:path';

/**
 * bench:attacks' own film, written to `dir`/film.mp4: a pan over a still of the Mandelbrot set (made
 * with lavfi, no download), with a patch of the still moving across it on a path of its own: with a
 * pan alone a shift in place is a shift in time, and an off-centre crop has two equally good answers.
 * `out` is the encoder's options (length included).
 */
export function makePanOverStill(
  ff: (...args: string[]) => unknown,
  dir: string,
  size: { width: number; height: number },
  out: readonly string[],
): string {
  const { width, height } = size;
  const file = (name: string) => path.join(dir, name);
  // The still is twice the film's size (k times the 640×360 film's): every distance scales with it.
  const k = height / 360;
  const still = `mandelbrot=size=${2 * width}x${2 * height}:start_scale=1.2:end_scale=1.2`;
  ff('-f', 'lavfi', '-i', still, '-frames:v', '1', file('still.png'));
  const pan = `crop=${width}:${height}:x='${20 * k}+t*${9 * k}':y='${30 * k}+t*${4 * k}'`;
  const sprite = `crop=${200 * k}:${200 * k}:${330 * k}:${300 * k},hflip`;
  const orbit = `overlay=x='${220 * k}+${200 * k}*sin(t/3)':y='${80 * k}+${70 * k}*cos(t/4)'`;
  const graph = `[0:v]split[a][b];[a]${pan}[pan];[b]${sprite}[sprite];[pan][sprite]${orbit}`;
  ff('-loop', '1', '-framerate', '25', '-i', file('still.png'), '-filter_complex', graph, ...out, file('film.mp4'));
  return file('film.mp4');
}
