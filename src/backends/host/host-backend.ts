import type { ShellBackend, ShellSession } from '../backend.js';
import { HostSession } from './host-session.js';

/**
 * Runs commands on the host, in a PTY (or pipes), as the current user. NOT a
 * sandbox: it exists for `--sandbox none`, which the user must name. Lives in
 * the shell thread, the one thread that may use node-pty.
 */
export function createHostBackend(): ShellBackend {
  const sessions = new Set<ShellSession>();
  return {
    kind: 'host',
    describe: () => 'host (no sandbox)',
    async openSession(options) {
      const session: ShellSession = new HostSession({ ...options, onClose: () => sessions.delete(session) });
      sessions.add(session);
      return session;
    },
    async close() {
      await Promise.all([...sessions].map((session) => session.close()));
    },
  };
}
