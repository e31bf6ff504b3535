/**
 * The tfjs DTCWT backend (DESIGN.md, "Watermarking"): transform.ts's tensor ops behind the
 * DtcwtBackend interface. With `@tensorflow/tfjs-node-gpu` installed they run on CUDA; without it
 * on tfjs's pure-JS 'cpu' backend, which is slow but exercises this code in every test run.
 *
 * tfjs-node-gpu is optional (it cannot be installed where its binary download host is out of
 * reach), so it is only ever imported dynamically, by a name TypeScript does not resolve.
 */
import type * as Tf from '@tensorflow/tfjs';
import { type DtcwtBackend, type FilterNames, type Frame, resolveFilters, type Transform } from '../backend.js';
import { checkForwardInput } from '../dtcwt/cpu.js';
import { ORIENTATIONS } from '../dtcwt/quads.js';
import type { TfModule } from './column.js';
import { type ModulateJob, type ModulateResult, modulateFrame } from '../modulate.js';
import { forwardTensors, type HighpassTensors, inverseTensors } from './transform.js';

const NODE_GPU = '@tensorflow/tfjs-node-gpu';

/** tfjs-node-gpu when it is installed and loads (CUDA libraries present), else null. */
export async function loadTfjsNodeGpu(): Promise<TfModule | null> {
  try {
    const specifier: string = NODE_GPU; // a plain string: keeps tsc from requiring the package
    return (await import(specifier)) as TfModule;
  } catch {
    return null;
  }
}

/** Frames of one size, so they stack into one [N, H, W, 1] tensor. */
function groupBy<T>(items: readonly T[], key: (item: T) => string): number[][] {
  const groups = new Map<string, number[]>();
  items.forEach((item, i) => {
    const k = key(item);
    const g = groups.get(k);
    if (g) g.push(i);
    else groups.set(k, [i]);
  });
  return [...groups.values()];
}

/**
 * The shape relations inverse2d relies on, checked up front: a wrong transform would otherwise
 * surface as a tfjs shape error, or as silently wrong slices of the padding.
 */
function checkTransform(t: Transform): void {
  const bad = () => new RangeError('inverse2d: highpass sizes are not consistent');
  let rows = t.lowpass.rows;
  let cols = t.lowpass.cols;
  if (t.lowpass.data.length !== rows * cols) throw bad();
  for (let level = t.highpasses.length; level >= 1; level--) {
    const hp = t.highpasses[level - 1] as Transform['highpasses'][number];
    const n = hp.rows * hp.cols * ORIENTATIONS;
    if (hp.re.length !== n || hp.im.length !== n || rows !== 2 * hp.rows || cols !== 2 * hp.cols) throw bad();
    if (level >= 2) [rows, cols] = [2 * rows, 2 * cols]; // colifilt doubles; level 1's colfilter keeps the size
    const next = t.highpasses[level - 2];
    const [wantRows, wantCols] = next ? [2 * next.rows, 2 * next.cols] : [t.height, t.width];
    const slack = next ? 2 : 1; // q-shift levels drop one padded row at each end; level 1 an odd size's last row
    if (rows - wantRows < 0 || rows - wantRows > slack || cols - wantCols < 0 || cols - wantCols > slack) throw bad();
    if (next && ((rows - wantRows) % 2 !== 0 || (cols - wantCols) % 2 !== 0)) throw bad();
    [rows, cols] = [wantRows, wantCols];
  }
  // With no highpasses the lowpass is the image itself, odd sizes still padded by one.
  if (rows - t.height < 0 || rows - t.height > 1 || cols - t.width < 0 || cols - t.width > 1) throw bad();
}

/** Concatenates same-length arrays (one per frame) into one tensor's worth of data. */
function stackArrays(arrays: Float32Array[]): Float32Array {
  if (arrays.length === 1) return arrays[0] as Float32Array;
  const size = arrays[0]?.length ?? 0;
  const out = new Float32Array(size * arrays.length);
  for (const [i, a] of arrays.entries()) out.set(a, i * size);
  return out;
}

/** Frame i's part of a batched tensor's data: a copy, so frames do not share one buffer. */
const frameOf = (data: Float32Array, count: number, i: number) =>
  count === 1 ? data : data.slice((i * data.length) / count, ((i + 1) * data.length) / count);

export class TfjsBackend implements DtcwtBackend {
  private closed = false;

  constructor(
    private readonly tf: TfModule,
    readonly name: string,
  ) {}

  forward(
    image: Float32Array,
    height: number,
    width: number,
    levels: number,
    filters?: FilterNames,
    firstHighpass = 1,
  ): Promise<Transform> {
    return this.forwardMany([{ image, height, width }], levels, filters, firstHighpass).then((t) => t[0] as Transform);
  }

  /** The transforms run as tensors; the resampling around them in JS on this thread. */
  modulate(job: ModulateJob): Promise<ModulateResult> {
    return modulateFrame(this, job);
  }

  inverse(transform: Transform, filters?: FilterNames): Promise<Float32Array> {
    return this.inverseMany([transform], filters).then((x) => x[0] as Float32Array);
  }

  async forwardMany(
    frames: readonly Frame[],
    levels: number,
    filters?: FilterNames,
    firstHighpass = 1,
  ): Promise<Transform[]> {
    this.checkOpen();
    const bank = resolveFilters(filters);
    for (const f of frames) checkForwardInput(f.image, f.height, f.width, levels, firstHighpass);
    const out: Transform[] = new Array(frames.length);
    for (const group of groupBy(frames, (f) => `${f.height}x${f.width}`)) {
      const { height, width } = frames[group[0] as number] as Frame;
      const images = group.map((i) => (frames[i] as Frame).image);
      const { tf } = this;
      // Flat [lowpass, re1, im1, re2, ...]: tidy keeps exactly the tensors it returns.
      const kept = tf.tidy(() => {
        const x = tf.tensor4d(stackArrays(images), [group.length, height, width, 1]);
        const { lowpass, highpasses } = forwardTensors(tf, x, levels, bank);
        return [lowpass, ...highpasses.flatMap((h) => [h.re, h.im])];
      });
      const [lowpass, ...highpasses] = kept as [Tf.Tensor4D, ...Tf.Tensor4D[]];
      try {
        // data(), not dataSync(): on a GPU backend the download then does not block the event loop.
        const [low, ...parts] = (await Promise.all(kept.map((t) => t.data()))) as Float32Array[];
        group.forEach((frame, i) => {
          out[frame] = {
            lowpass: {
              data: frameOf(low as Float32Array, group.length, i),
              rows: lowpass.shape[1],
              cols: lowpass.shape[2],
            },
            // Skipped levels are computed anyway (on a GPU the whole graph is one pass) but come back
            // as zeros, as the CPU backend returns them, so every backend answers alike.
            highpasses: Array.from({ length: levels }, (_, level) => {
              const re = frameOf(parts[2 * level] as Float32Array, group.length, i);
              const im = frameOf(parts[2 * level + 1] as Float32Array, group.length, i);
              if (level + 1 < firstHighpass) {
                re.fill(0);
                im.fill(0);
              }
              return {
                re,
                im,
                rows: (highpasses[2 * level] as Tf.Tensor4D).shape[1],
                cols: (highpasses[2 * level] as Tf.Tensor4D).shape[2],
              };
            }),
            height,
            width,
          };
        });
      } finally {
        tf.dispose(kept);
      }
    }
    return out;
  }

  async inverseMany(transforms: readonly Transform[], filters?: FilterNames): Promise<Float32Array[]> {
    this.checkOpen();
    const bank = resolveFilters(filters);
    for (const t of transforms) checkTransform(t);
    const shapeKey = (t: Transform) =>
      JSON.stringify([t.height, t.width, t.lowpass.rows, t.lowpass.cols, t.highpasses.map((h) => [h.rows, h.cols])]);
    const out: Float32Array[] = new Array(transforms.length);
    for (const group of groupBy(transforms, shapeKey)) {
      const ts = group.map((i) => transforms[i] as Transform);
      const first = ts[0] as Transform;
      const n = ts.length;
      const { tf } = this;
      const image = tf.tidy(() => {
        const lowpass = tf.tensor4d(stackArrays(ts.map((t) => t.lowpass.data)), [
          n,
          first.lowpass.rows,
          first.lowpass.cols,
          1,
        ]);
        const highpasses: HighpassTensors[] = first.highpasses.map((h, level) => {
          const part = (key: 're' | 'im') =>
            tf.tensor4d(stackArrays(ts.map((t) => (t.highpasses[level] as Transform['highpasses'][number])[key])), [
              n,
              h.rows,
              h.cols,
              ORIENTATIONS,
            ]);
          return { re: part('re'), im: part('im') };
        });
        return inverseTensors(tf, lowpass, highpasses, first.height, first.width, bank);
      });
      try {
        const data = (await image.data()) as Float32Array;
        group.forEach((t, i) => {
          out[t] = frameOf(data, n, i);
        });
      } finally {
        image.dispose();
      }
    }
    return out;
  }

  async close(): Promise<void> {
    // The tfjs engine is process-wide and may be shared, so there is nothing of ours to free:
    // every tensor is disposed at the end of the call that made it.
    this.closed = true;
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('DTCWT backend is closed');
  }
}

/**
 * The tfjs backend on the best engine present: tfjs-node-gpu if it loads, else pure-JS tfjs on
 * its 'cpu' backend (chosen explicitly: tfjs would otherwise try webgl, absent under Node).
 */
export async function createTfjsBackend(): Promise<TfjsBackend> {
  const gpu = await loadTfjsNodeGpu();
  if (gpu) {
    await gpu.ready();
    return new TfjsBackend(gpu, `tfjs-node-gpu (${gpu.getBackend()})`);
  }
  const tf: TfModule = await import('@tensorflow/tfjs');
  await tf.setBackend('cpu');
  await tf.ready();
  return new TfjsBackend(tf, `tfjs (${tf.getBackend()})`);
}
