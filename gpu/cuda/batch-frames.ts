/**
 * The frames of a mark batch on the host side: which memory each variant B goes to before the
 * batch runs, and what each job gets back once it is known good (mark-lane.ts runs the batch).
 */
import type { MarkedFrame, ModulateJob } from '../modulate-job.js';

export const framesOf = (job: ModulateJob): Uint8Array[] => [job.frame, ...(job.next ?? [])];

/**
 * Where each frame's variant B goes: for `both`, the memory the caller gave (a pinned frame's is
 * written by the device directly) or a new frame. Every one is chosen before any frame is written,
 * so a failure leaves the input whole.
 */
export function minusFrames(batch: readonly { job: ModulateJob }[]): (Uint8Array | undefined)[] {
  return batch.flatMap(({ job }) =>
    framesOf(job).map((frame, k) => {
      if (job.want !== 'both') return undefined;
      const into = job.minusInto?.[k];
      // Every byte is written, so new memory need not be zeroed first (3 MB a 1080p frame).
      return into?.length === frame.length
        ? into
        : new Uint8Array(Buffer.allocUnsafeSlow(frame.length).buffer, 0, frame.length);
    }),
  );
}

/** One frame's marked lumas as the device left them in staging (B only where it did not write `minus` itself). */
export interface StagedLumas {
  a: Uint8Array;
  b: Uint8Array;
  /** the device wrote B's luma straight into `minus` */
  minusOnDevice: boolean;
}

/** The wanted variants of a frame: A over the frame itself, and for `both`, B in `minus` with the frame's chroma. */
export function writtenVariants(
  frame: Uint8Array,
  want: ModulateJob['want'],
  minus: Uint8Array | undefined,
  staged: StagedLumas,
): MarkedFrame {
  const plane = staged.a.length;
  if (want === 'plus') return { plus: (frame.set(staged.a), frame) };
  if (want === 'minus' || !minus) return { minus: (frame.set(staged.b), frame) };
  minus.set(frame.subarray(plane), plane); // the chroma (and anything after the luma) comes along
  if (!staged.minusOnDevice) minus.set(staged.b);
  frame.set(staged.a);
  return { plus: frame, minus };
}
