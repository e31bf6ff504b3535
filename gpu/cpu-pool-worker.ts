/**
 * The worker-thread side of the CPU pool (gpu/cpu-pool.ts): runs one transform per message with
 * the reference code in gpu/dtcwt/cpu.ts and posts the result back, transferring every output
 * buffer so that no coefficient array is copied on the way out. Loaded through worker-entry.mjs.
 */
import { parentPort } from 'node:worker_threads';
import { addTransfer, type FilterNames, resolveFilters, type Transform } from './backend.js';
import { forward2d, inverse2d } from './dtcwt/cpu.js';
import { type ModulateJob, type ModulateResult, modulateFrame } from './modulate.js';
import { MARK_PARTS, openThreadClock } from './thread-cpu.js';

export type PoolRequest =
  | {
      id: number;
      op: 'forward';
      image: Float32Array;
      height: number;
      width: number;
      levels: number;
      filters?: FilterNames;
      firstHighpass?: number;
    }
  | { id: number; op: 'inverse'; transform: Transform; filters?: FilterNames }
  | ({ id: number; op: 'modulate' } & ModulateJob);

/** Errors travel as plain fields: structured clone keeps an Error's message but not reliably its name or stack. */
export interface PoolError {
  name: string;
  message: string;
  stack?: string;
}

export type PoolResponse =
  | { id: number; ok: true; op: 'forward'; transform: Transform }
  | { id: number; ok: true; op: 'inverse'; image: Float32Array }
  | ({ id: number; ok: true; op: 'modulate' } & ModulateResult)
  | { id: number; ok: false; error: PoolError };

/** Everything a worker posts: replies, and one `ready` once its modules have loaded. */
export type PoolMessage = PoolResponse | { ready: true };

/** The transforms, run here on this thread, for the modulate job. */
const local = {
  forward: async (
    image: Float32Array,
    height: number,
    width: number,
    levels: number,
    names?: FilterNames,
    firstHighpass?: number,
  ) => forward2d(image, height, width, levels, resolveFilters(names), firstHighpass),
  inverse: async (t: Transform, names?: FilterNames) => inverse2d(t, resolveFilters(names)),
};

/** This thread's CPU clock (Linux): each modulate reply says where its time went. */
const clock = openThreadClock();

async function handle(req: PoolRequest): Promise<{ response: PoolResponse; transfer: ArrayBuffer[] }> {
  const transfer: ArrayBuffer[] = [];
  if (req.op === 'modulate') {
    const { id, op, ...job } = req;
    const result = await modulateFrame(local, job, clock);
    for (const marked of [result, ...(result.next ?? [])]) {
      for (const frame of [marked.plus, marked.minus])
        if (frame && frame.buffer instanceof ArrayBuffer && !transfer.includes(frame.buffer))
          transfer.push(frame.buffer);
    }
    return { response: { id, ok: true, op, ...result }, transfer };
  }
  const filters = resolveFilters(req.filters);
  if (req.op === 'forward') {
    const transform = forward2d(req.image, req.height, req.width, req.levels, filters, req.firstHighpass);
    addTransfer(transfer, transform.lowpass.data);
    for (const h of transform.highpasses) {
      addTransfer(transfer, h.re);
      addTransfer(transfer, h.im);
    }
    return { response: { id: req.id, ok: true, op: 'forward', transform }, transfer };
  }
  const image = inverse2d(req.transform, filters);
  addTransfer(transfer, image);
  return { response: { id: req.id, ok: true, op: 'inverse', image }, transfer };
}

const port = parentPort;
if (!port) throw new Error('cpu-pool-worker must run in a worker thread');

/**
 * The thread's CPU since the last reply went out that the job's parts do not account for (taking
 * the message in, sending the last reply) is the job's handoff.
 */
let sinceReply = clock?.seconds() ?? 0;
function chargeHandoff(response: PoolResponse): void {
  const times = response.ok && response.op === 'modulate' ? response.times : undefined;
  if (!clock || !times) return;
  const parts = MARK_PARTS.reduce((sum, part) => sum + times[part], 0);
  times.handoff = Math.max(0, clock.seconds() - sinceReply - parts);
}

port.on('message', async (req: PoolRequest) => {
  let out: { response: PoolResponse; transfer: ArrayBuffer[] };
  try {
    out = await handle(req);
  } catch (e) {
    // A bad job (wrong size, bad level count) fails only itself; the worker stays up for the next one.
    const err = e instanceof Error ? e : new Error(String(e));
    out = {
      response: { id: req.id, ok: false, error: { name: err.name, message: err.message, stack: err.stack } },
      transfer: [],
    };
  }
  chargeHandoff(out.response);
  port.postMessage(out.response, out.transfer);
  sinceReply = clock?.seconds() ?? 0;
});
// Tells the pool this thread loaded: a worker that dies before saying so cannot start at all.
port.postMessage({ ready: true } satisfies PoolMessage);
