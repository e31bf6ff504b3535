/**
 * The reference backend: cpu.ts on the calling thread, no workers. Tests and the embed benchmark
 * use it as the baseline the other backends must match bit for bit; createDtcwtBackend never
 * picks it.
 *
 * Its own file rather than backend.ts: it needs modulate.ts, which needs backend.ts's interface,
 * and the interface file should depend on nothing that implements it.
 */
import { type DtcwtBackend, resolveFilters } from './backend.js';
import { forward2d, inverse2d } from './dtcwt/cpu.js';
import { modulateFrame } from './modulate.js';

export function createCpuDirectBackend(): DtcwtBackend {
  let closed = false;
  const run = async <R>(fn: () => R): Promise<R> => {
    if (closed) throw new Error('DTCWT backend is closed');
    return fn();
  };
  const backend: DtcwtBackend = {
    name: 'cpu (direct)',
    forward: (image, height, width, levels, filters, firstHighpass) =>
      run(() => forward2d(image, height, width, levels, resolveFilters(filters), firstHighpass)),
    inverse: (transform, filters) => run(() => inverse2d(transform, resolveFilters(filters))),
    forwardMany: (frames, levels, filters, firstHighpass) =>
      Promise.all(frames.map((f) => backend.forward(f.image, f.height, f.width, levels, filters, firstHighpass))),
    inverseMany: (transforms, filters) => Promise.all(transforms.map((t) => backend.inverse(t, filters))),
    modulate: (job) => modulateFrame(backend, job),
    close: async () => {
      closed = true;
    },
  };
  return backend;
}
