/**
 * What a modulate call takes and gives back (the kernel itself is modulate.ts). Types only, in a
 * file of their own, so that backend.ts can name them in the DtcwtBackend interface without
 * importing the kernel, which itself works through that interface.
 */
import type { MarkPartTimes } from './thread-cpu.js';

export interface ModulateJob {
  /** A frame whose first width × height bytes are the luma (yuv420p, or a bare luma plane); the rest passes on. */
  frame: Uint8Array;
  /** frames that follow `frame` in the same segment (same gains) and take its δ; taken like `frame` */
  next?: Uint8Array[];
  width: number;
  height: number;
  /** the luma is box-reduced by this factor before the transform */
  scale: number;
  levels: number;
  /** 1-based levels whose coefficients are modulated, in the order `gains` lists them */
  modulated: readonly number[];
  /** one gain per coefficient of the modulated levels: level, then position, then orientation */
  gains: Float32Array;
  /** which frames to return: the luma plus δ, minus δ, or both */
  want: 'plus' | 'minus' | 'both';
  /**
   * With `both`: memory for each frame's minus variant (`frame`, then `next`), each as large as
   * its frame, from a caller that reuses its frames' memory; new memory where absent.
   */
  minusInto?: Uint8Array[];
  /**
   * The root-mean-square change (grey levels) a frame's δ is held within: a frame whose texture
   * would let it grow past `max` is scaled down to it; one so smooth that it stays under `min` is
   * raised towards it, by at most `maxBoost` (absent: δ as the gains make it).
   */
  rms?: RmsRange;
}

export interface RmsRange {
  min: number;
  max: number;
  maxBoost: number;
}

/** `frame` itself (transferred back) carries the first wanted variant; `both` adds a copy for minus. */
export interface MarkedFrame {
  plus?: Uint8Array;
  minus?: Uint8Array;
}

/** The first frame's variants, and those of each of `next` in order. */
export interface ModulateResult extends MarkedFrame {
  next?: MarkedFrame[];
  /** where the CPU time of the job went, when the thread that ran it has a clock (gpu/thread-cpu.ts) */
  times?: MarkPartTimes;
}
