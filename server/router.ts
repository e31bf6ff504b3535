import type { Result, Router } from 'hono/router';
import { TrieRouter } from 'hono/router/trie-router';

/**
 * hono's TrieRouter, with the match of each static path (one without a parameter or a wildcard,
 * /api/v1/auth/verify) kept once made. The spec's routes put static and parameter segments side
 * by side (/invoices/upcoming and /invoices/:id, /viewers/search and /viewers/:viewerId), which
 * hono's RegExpRouter refuses, so the trie walks every request's path; its walk and the arrays it
 * makes were a tenth of what a keyed request allocated. A kept match is shared, never changed:
 * hono only reads a match (the handlers in order and their parameters). Kept
 * matches are bounded: Node's parser takes a few dozen methods, and the paths are the routes'.
 */
export class StaticMatchRouter<T> implements Router<T> {
  readonly name = 'TrieRouter (static paths kept)';
  readonly #trie = new TrieRouter<T>();
  readonly #staticPaths = new Set<string>();
  readonly #kept = new Map<string, Result<T>>();

  add(method: string, path: string, handler: T): void {
    this.#trie.add(method, path, handler);
    if (!/[:*?{]/.test(path)) this.#staticPaths.add(path);
    this.#kept.clear();
  }

  match(method: string, path: string): Result<T> {
    if (!this.#staticPaths.has(path)) return this.#trie.match(method, path);
    const key = `${method} ${path}`;
    let found = this.#kept.get(key);
    if (!found) {
      found = this.#trie.match(method, path);
      this.#kept.set(key, found);
    }
    return found;
  }
}
