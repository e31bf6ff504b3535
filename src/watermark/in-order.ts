/**
 * Maps an async source through an async function with up to `window` calls in flight, yielding
 * results in source order. This is how frames keep every worker of the DTCWT pool busy while
 * the encoder still receives them one after another; the window bounds the frames in memory.
 */
export async function* inOrder<T, R>(
  source: AsyncIterable<T>,
  fn: (item: T, index: number) => Promise<R>,
  window: number,
): AsyncGenerator<R> {
  const pending: Promise<R>[] = [];
  let index = 0;
  for await (const item of source) {
    const p = fn(item, index++);
    // A rejection is observed when its turn comes; until then it must not count as unhandled.
    p.catch(() => undefined);
    pending.push(p);
    if (pending.length >= window) yield await (pending.shift() as Promise<R>);
  }
  while (pending.length > 0) yield await (pending.shift() as Promise<R>);
}

/**
 * Keeps up to `depth` items of an async source pulled ahead of its consumer. A decoder at the far
 * end of a pipe otherwise stops as soon as the pipe is full (a fraction of one frame) and waits
 * for the consumer, which then waits for it: with frames read ahead, decoding the next ones
 * overlaps with the work on this one.
 */
export async function* readAhead<T>(source: AsyncIterable<T>, depth: number): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  const queue: Promise<IteratorResult<T>>[] = [];
  try {
    for (;;) {
      // An async generator queues calls to next() and settles them in order.
      while (queue.length < depth) {
        const next = it.next();
        next.catch(() => undefined);
        queue.push(next);
      }
      const r = await (queue.shift() as Promise<IteratorResult<T>>);
      if (r.done) return;
      yield r.value;
    }
  } finally {
    await it.return?.(undefined);
  }
}
