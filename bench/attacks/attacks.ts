// The pirate's transforms, as ffmpeg arguments that turn the marked copy into a leak. Each family
// of the forensic method's list has several strengths; the camcorder chain films a screen: a
// keystone, blur, sensor noise, a 24-fps re-time and CRF 32, with and without a slow shake.

export interface Attack {
  family: string;
  name: string;
  /** ffmpeg arguments between the input and the output (the video encoder is added after them) */
  args: (seconds: number) => string[];
  /** made from the unmarked film instead: a control, where the only right verdict is no_match */
  unmarked?: boolean;
}

const vf = (filter: string) => () => ['-vf', filter];

/**
 * The leak's 10-s parts in the order listed (reversed, some dropped or repeated): each trimmed and
 * concatenated, from the video stream or the audio one.
 */
function reorderParts(order: number[], stream: 'video' | 'audio'): (seconds: number) => string[] {
  const [trim, setpts, out] =
    stream === 'video' ? ['[0:v]trim', 'setpts', 'v=1[o]'] : ['[0:a]atrim', 'asetpts', 'v=0:a=1[o]'];
  return (seconds) => {
    const parts = order.filter((s) => s * 10 < seconds);
    const trims = parts.map(
      (s, i) => `${trim}=${s * 10}:${Math.min(seconds, s * 10 + 10)},${setpts}=PTS-STARTPTS[p${i}]`,
    );
    const inputs = parts.map((_, i) => `[p${i}]`).join('');
    return ['-filter_complex', `${trims.join(';')};${inputs}concat=n=${parts.length}:${out}`, '-map', '[o]'];
  };
}

const reorder = (order: number[]) => reorderParts(order, 'video');

/** Two spans of the leak gone: 15–25 s and 40–45 s. */
const CUT_OUT = "select='not(between(t,15,25)+between(t,40,45))'";

/** A crop of `share` of each side, off centre (all of it from the left, a third of it from the top), scaled back. */
/** The film made small (`small`, an ffmpeg filter) and laid over moving noise at `at` (overlay's x and y). */
const pictureInPicture = (small: string, at: string) => [
  '-filter_complex',
  `[0:v]split[a][b];[b]lutyuv=y=110:u=128:v=128,noise=alls=60:allf=t[bg];[a]${small}[small];[bg][small]overlay=${at}[o]`,
  '-map',
  '[o]',
];

const offCentreCrop = (share: number) =>
  `crop=iw*${1 - share}:ih*${1 - share}:iw*${share}:ih*${share / 3},` +
  `scale=trunc(iw/${1 - share}/2)*2:trunc(ih/${1 - share}/2)*2`;

/** A keystone of `share` of the width on each side of the top edge: the screen seen from below. */
const keystone = (share: number, w = 'W', h = 'H') =>
  `perspective=x0=${w}*${share}:y0=0:x1=${w}*(1-${share}):y1=0:x2=0:y2=${h}:x3=${w}:y3=${h}:sense=destination`;

export const ATTACKS: readonly Attack[] = [
  { family: 'none', name: 'the marked copy (CRF 23)', args: () => [] },
  { family: 'none', name: 'the marked copy at CRF 30', args: () => ['-crf', '30'] },
  { family: 'control', name: 'the unmarked film (CRF 23)', args: () => [], unmarked: true },
  { family: 'time', name: 'segments reversed', args: reorder([5, 4, 3, 2, 1, 0]) },
  { family: 'time', name: 'segment 2 dropped and 3 repeated', args: reorder([0, 1, 3, 3, 4, 5]) },
  { family: 'time', name: 'segments shuffled', args: reorder([3, 0, 5, 1, 4, 2]) },
  { family: 'time', name: 'two spans cut out, gaps left', args: () => ['-vf', CUT_OUT, '-vsync', 'vfr'] },
  {
    family: 'time',
    name: 'two spans cut out, time made continuous',
    args: () => ['-vf', `${CUT_OUT},setpts=N/FRAME_RATE/TB`],
  },
  { family: 'time', name: '8% fast', args: vf('setpts=PTS/1.08') },
  { family: 'time', name: '8% slow', args: vf('setpts=PTS*1.08') },
  { family: 'time', name: 'speed 0.90', args: vf('setpts=PTS/0.9') },
  { family: 'time', name: 'speed 1.05', args: vf('setpts=PTS/1.05') },
  { family: 'time', name: 'speed 1.10', args: vf('setpts=PTS/1.1') },
  { family: 'time', name: '24 fps', args: vf('fps=24') },
  { family: 'time', name: '30 fps', args: vf('fps=30') },
  { family: 'time', name: '50 fps', args: vf('fps=50') },
  { family: 'time', name: '60 fps', args: vf('fps=60') },
  { family: 'picture', name: 'mirrored', args: vf('hflip') },
  { family: 'picture', name: 'upside down', args: vf('vflip') },
  { family: 'picture', name: 'rotated 2°', args: vf('rotate=2*PI/180') },
  { family: 'picture', name: 'rotated 5°', args: vf('rotate=5*PI/180') },
  {
    family: 'picture',
    name: 'off-centre crop 5%',
    args: vf('crop=iw*0.95:ih*0.95:0:0,scale=trunc(iw/0.95/2)*2:trunc(ih/0.95/2)*2'),
  },
  {
    family: 'picture',
    name: 'off-centre crop 10%',
    args: vf('crop=iw*0.9:ih*0.9:iw*0.1:0,scale=trunc(iw/0.9/2)*2:trunc(ih/0.9/2)*2'),
  },
  { family: 'picture', name: 'scaled to half', args: vf('scale=iw/2:ih/2') },
  {
    family: 'picture',
    name: 'letterbox',
    args: vf('scale=iw:trunc(ih*0.75/2)*2,pad=iw:trunc(ih/0.75/2)*2:0:(oh-ih)/2'),
  },
  {
    family: 'picture',
    name: 'pillarbox',
    args: vf('scale=trunc(iw*0.75/2)*2:ih,pad=trunc(iw/0.75/2)*2:ih:(ow-iw)/2:0'),
  },
  { family: 'picture', name: 'keystone 3%', args: vf(keystone(0.03)) },
  { family: 'picture', name: 'keystone 5%', args: vf(keystone(0.05)) },
  { family: 'photometry', name: 'gamma 1.4', args: vf('eq=gamma=1.4') },
  { family: 'photometry', name: 'contrast 1.3', args: vf('eq=contrast=1.3') },
  { family: 'photometry', name: 'saturation 0.4', args: vf('eq=saturation=0.4') },
  {
    family: 'camcorder',
    name: 'keystone 4% + blur σ 1.5 + noise + 24 fps + CRF 32',
    args: () => ['-vf', `${keystone(0.04)},gblur=sigma=1.5,noise=alls=8:allf=t,fps=24`, '-crf', '32'],
  },
  {
    family: 'camcorder',
    name: 'the same with blur σ 3',
    args: () => ['-vf', `${keystone(0.04)},gblur=sigma=3,noise=alls=8:allf=t,fps=24`, '-crf', '32'],
  },
  {
    family: 'camcorder',
    name: 'phone: turned 3°, off-centre crop 7%, speed 1.05, 24 fps, CRF 35',
    args: () => ['-vf', `rotate=3*PI/180,${offCentreCrop(0.07)},setpts=PTS/1.05,fps=24`, '-crf', '35'],
  },
  {
    family: 'picture',
    name: 'picture-in-picture: at 50% over moving noise',
    args: () => pictureInPicture('scale=trunc(iw/4)*2:trunc(ih/4)*2', 'x=W*0.35:y=H*0.15'),
  },
  {
    family: 'picture',
    name: 'picture-in-picture: mirrored, at 40% in a corner',
    args: () => pictureInPicture('hflip,scale=trunc(iw/5)*2:trunc(ih/5)*2', 'x=W*0.03:y=H*0.55'),
  },
  {
    family: 'picture',
    name: 'heavy crop: 60% of the frame, off centre, enlarged',
    args: vf('crop=iw*0.6:ih*0.6:iw*0.35:ih*0.1,scale=trunc(iw/0.6/2)*2:trunc(ih/0.6/2)*2'),
  },
  {
    family: 'camcorder',
    name: 'handheld: a slow shake besides',
    args: () => [
      '-vf',
      `${keystone(0.04)},crop=iw*0.96:ih*0.96:iw*0.02+iw*0.015*sin(t*0.7):ih*0.02+ih*0.015*cos(t*0.5),scale=trunc(iw/0.96/2)*2:trunc(ih/0.96/2)*2,gblur=sigma=1.5,noise=alls=8:allf=t,fps=24`,
      '-crf',
      '32',
    ],
  },
];

const reorderAudio = (order: number[]) => reorderParts(order, 'audio');

const af = (filter: string) => () => ['-af', filter];

/** The same families on a marked track (AAC 128 kb/s unless the attack says otherwise): time, speed with and without the pitch, codecs. */
export const MUSIC_ATTACKS: readonly Attack[] = [
  { family: 'music', name: 'the marked track (AAC 128k)', args: () => [] },
  { family: 'music', name: 'MP3 96k', args: () => ['-c:a', 'libmp3lame', '-b:a', '96k'] },
  { family: 'music', name: '22.05 kHz mono', args: () => ['-ar', '22050', '-ac', '1'] },
  { family: 'music', name: 'parts reversed', args: reorderAudio([5, 4, 3, 2, 1, 0]) },
  { family: 'music', name: 'part 2 dropped and 3 repeated', args: reorderAudio([0, 1, 3, 3, 4, 5]) },
  { family: 'music', name: '8% fast (pitch raised)', args: af('asetrate=44100*1.08,aresample=44100') },
  { family: 'music', name: '8% slow (pitch lowered)', args: af('asetrate=44100*0.92,aresample=44100') },
  { family: 'music', name: '8% fast (pitch kept)', args: af('atempo=1.08') },
  { family: 'music', name: '5% slow (pitch kept)', args: af('atempo=0.95') },
];
