// Films and music for tests, synthesised with ffmpeg's lavfi: no fixture files.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { mediaBinaries } from '../../src/media/binaries.js';

/**
 * A 640×360 film with a 440-Hz tone: a slow pan (14 px/s right, 6 down) over a Mandelbrot still,
 * textured at every scale the mark uses, so the watermark reads from it after re-encoding.
 * Written as `film` (an .mp4), with its still beside it.
 */
export function makePanFilm(film: string, seconds: number): string {
  const ff = (...args: string[]) => execFileSync(mediaBinaries().ffmpeg, ['-v', 'error', '-y', ...args]);
  const still = path.join(path.dirname(film), `${path.basename(film, '.mp4')}-still.png`);
  ff('-f', 'lavfi', '-i', 'mandelbrot=size=1280x720:start_scale=1.2:end_scale=1.2', '-frames:v', '1', still);
  ff(
    '-loop',
    '1',
    '-framerate',
    '25',
    '-i',
    still,
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=44100',
    '-vf',
    "crop=640:360:x='20+t*14':y='30+t*6'",
    '-t',
    String(seconds),
    '-c:v',
    'libx264',
    '-crf',
    '16',
    '-preset',
    'veryfast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    film,
  );
  return film;
}

/**
 * Fifteen tones from A2 to A7 (bass below the marked band, melody and harmonics in it), each
 * switched on and off per "note" by a hashed gate with a decay, at rates that never line up, so
 * the loudness envelope never repeats and alignment has one answer; pink noise as a floor.
 * Odd tones go left, even ones right. variant shifts every rate and hash: other music.
 */
export function musicGraph(variant: number, seconds: number): string {
  const notes = [
    110, 164.81, 220, 277.18, 329.63, 440, 554.37, 659.25, 880, 1108.73, 1318.51, 1760, 2217.46, 2637.02, 3520,
  ];
  const voices = notes.map((f, i) => {
    const rate = (1.3 + 0.37 * i + 0.23 * variant).toFixed(2);
    const hash = `st(0,sin(floor(t*${rate})*12.9898+${i * 7 + 1 + 31 * variant})*43758.5453)`;
    const gate = `${hash}*0+0.15+0.85*gt(ld(0)-floor(ld(0)),0.45)*exp(-2*(t*${rate}-floor(t*${rate})))`;
    return `sine=f=${f * (1 + 0.06 * variant)}:r=44100:d=${seconds},volume=eval=frame:volume='${gate}'[s${i}]`;
  });
  const side = (odd: number) => notes.map((_, i) => (i % 2 === odd ? `[s${i}]` : '')).join('');
  return [
    ...voices,
    `${side(0)}amix=inputs=8[l]`,
    `${side(1)}amix=inputs=7[r]`,
    '[l][r]join=inputs=2:channel_layout=stereo,volume=4[m]',
    `anoisesrc=c=pink:a=0.02:r=44100:d=${seconds}:seed=${3 + variant},pan=stereo|c0=c0|c1=c0[n]`,
    '[m][n]amix=inputs=2:duration=first,volume=2',
  ].join(';');
}
