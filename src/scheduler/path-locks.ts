import { resolve } from 'node:path';

/**
 * Serialises calls that edit the same file: each call waits for the previous
 * holders of any of its paths. Calls without paths never wait. FIFO per path,
 * so edits apply in the order the model asked for them.
 */
export class PathLocks {
  readonly #tails = new Map<string, Promise<void>>();

  async acquire(paths: readonly string[]): Promise<() => void> {
    const keys = [...new Set(paths.map((p) => resolve(p)))].sort();
    if (keys.length === 0) return () => {};
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const previous = keys.map((key) => this.#tails.get(key) ?? Promise.resolve());
    for (const key of keys) this.#tails.set(key, held);
    await Promise.all(previous);
    return () => {
      for (const key of keys) if (this.#tails.get(key) === held) this.#tails.delete(key);
      release();
    };
  }
}
