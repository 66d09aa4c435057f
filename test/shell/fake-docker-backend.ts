/**
 * A stand-in for src/sandbox/docker-backend.ts, loaded by the shell thread in
 * sandbox-selection tests: its probe answers, and a "command" prints
 * `fake ran: <command>` and exits 0.
 */
import type { ShellBackend, SpawnedProcess } from '../../src/shell/backend.js';

export async function probeDocker(): Promise<{ available: true }> {
  return { available: true };
}

export async function createDockerBackend(): Promise<ShellBackend> {
  return {
    kind: 'docker',
    describe: () => 'docker (fake)',
    async openSession({ sessionId }) {
      return {
        id: sessionId,
        async spawn(options): Promise<SpawnedProcess> {
          let listener: ((chunk: Uint8Array, stream: 'stdout' | 'stderr') => void) | undefined;
          const exited = new Promise<{ exitCode: number; signal: null }>((resolve) =>
            setImmediate(() => {
              listener?.(new TextEncoder().encode(`fake ran: ${options.command}`), 'stdout');
              resolve({ exitCode: 0, signal: null });
            }),
          );
          return { pid: 1, onData: (l) => (listener = l), exited, kill: async () => {} };
        },
        async close() {},
      };
    },
    async close() {},
  };
}
