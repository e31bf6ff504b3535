/**
 * Rung after an event is committed to the outbox, so a running delivery worker looks at once
 * instead of at its next poll. The context holds one; the worker listens while it runs, so
 * nothing replaces a part of the context after it is made.
 */
export class Bell {
  private readonly listeners = new Set<() => void>();

  /** Adds a listener; the function returned removes it. */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  ring(): void {
    for (const listener of this.listeners) listener();
  }
}
