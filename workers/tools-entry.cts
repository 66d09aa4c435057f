/**
 * The file Piscina loads in each file-tool thread: CommonJS on purpose.
 *
 * Piscina loads its file with require() before it tries import(). For an ES
 * module that is Node's require(esm), and terminating a thread while it
 * instantiates the module graph synchronously aborts the whole process
 * (`FATAL ERROR: v8::Module::IsGraphAsync ... must be used on an instantiated
 * module`, Node 20 and 24). A pool is closed while its threads still start
 * whenever a short command ends early (a `toolcell run` whose model answers
 * at once), so that crash reached CI. Here require() meets plain CommonJS,
 * and the worker itself (tools.ts) is loaded with import(), whose
 * instantiation a termination ends cleanly.
 *
 * The handler is exported as a promise: Piscina awaits it before it calls
 * the thread ready, so the worker and its tool modules are loaded at start
 * (not at the first call: between calls Piscina blocks the thread in
 * Atomics.wait, where an import started here would not progress). When they
 * fail to load (a tool module that throws in a worker thread), the thread
 * still starts and each call fails at once with the reason: a failed start
 * would have Piscina start another thread, which fails the same way, while
 * the call waits for ever.
 */
import type { ToolTaskResult, WorkerMessage } from '../src/worker-pool/worker-protocol.js' with { 'resolution-mode': 'import' };

type RunToolTask = (message: WorkerMessage) => Promise<ToolTaskResult | ToolTaskResult[]>;

const runToolTask: Promise<RunToolTask> = import('./tools.js').then(
  (worker) => worker.default,
  (error: unknown) => {
    const reason = new Error(`the file-tool worker could not load: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    return () => Promise.reject(reason);
  },
);

// `__esModule` makes Piscina's require() wrapper take `default` as it is.
export = { __esModule: true, default: runToolTask };
