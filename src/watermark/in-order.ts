/**
 * Maps an async source through an async function with up to `window` calls in flight, yielding
 * results in source order. This is how frames keep every worker of the DTCWT pool busy while
 * the encoder still receives them one after another; the window bounds the frames in memory.
 */
export async function* inOrder<T, R>(source: AsyncIterable<T>, fn: (item: T, index: number) => Promise<R>, window: number): AsyncGenerator<R> {
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
