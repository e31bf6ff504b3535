/**
 * Requests that need the same thing within one event-loop turn share one database call, made at
 * the end of the turn (setImmediate). The call runs after every caller in the batch arrived, so
 * each caller sees a state at least as new as its own arrival: sharing changes nothing a caller
 * can observe, but under load it turns many identical statements (one API key's lookups, one
 * organization's rate counter) into one.
 *
 * `run` gets the first caller's argument and the number of callers, and answers with a function
 * that gives caller i its result (the same for reads; a distinct count for the rate counter).
 * The batch is sent from setImmediate: a test that fakes timers must leave setImmediate real.
 */
export function batchPerTurn<A, R>(
  keyOf: (arg: A) => string,
  run: (arg: A, callers: number) => Promise<(i: number) => R>,
): (arg: A) => Promise<R> {
  type Caller = { resolve(value: R): void; reject(err: unknown): void };
  let waiting = new Map<string, { arg: A; callers: Caller[] }>();

  const flush = () => {
    const batch = waiting;
    waiting = new Map();
    for (const { arg, callers } of batch.values()) {
      run(arg, callers.length).then(
        (resultFor) => {
          callers.forEach((c, i) => {
            c.resolve(resultFor(i));
          });
        },
        (err) => {
          for (const c of callers) c.reject(err);
        },
      );
    }
  };

  return (arg) =>
    new Promise<R>((resolve, reject) => {
      const key = keyOf(arg);
      let entry = waiting.get(key);
      if (!entry) {
        if (waiting.size === 0) setImmediate(flush);
        entry = { arg, callers: [] };
        waiting.set(key, entry);
      }
      entry.callers.push({ resolve, reject });
    });
}
