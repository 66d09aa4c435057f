import type { ExecutionContext } from 'ava';
import { WorkerPool, type WorkerPoolOptions } from '../../src/worker-pool/worker-pool.js';

/** URL of the misbehaving test tools module (compiled next to this helper in dist/test). */
export const testToolModuleUrl = new URL('../fixtures/tools/test-tools.js', import.meta.url).href;

/** A real Piscina pool with the built-ins and the test tools, closed when the test ends. */
export function createTestPool(t: ExecutionContext, options: WorkerPoolOptions = {}): WorkerPool {
  const pool = new WorkerPool({ threads: 2, toolModules: [testToolModuleUrl], ...options });
  t.teardown(() => pool.close());
  return pool;
}
