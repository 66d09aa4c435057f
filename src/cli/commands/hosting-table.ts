import type { AdminSessionInfo } from '../../hosting/index.js';
import { escapeCell } from '../../ui/escape-text.js';

/** `3h02m`, `4m05s`, `12s`: a session's age at a glance. */
export function formatAge(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** `12.5 MiB`, or `-` when the engine did not report it. */
export function formatMemory(bytes: number | undefined): string {
  if (bytes === undefined) return '-';
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

/** `key:<id>` or `oidc:<sub>`: a key id and a token's `sub` are names in different spaces and must not look alike. */
export function formatSubject(session: Pick<AdminSessionInfo, 'subject' | 'via'>): string {
  const subject = escapeCell(String(session.subject));
  return session.via === 'api_key' ? `key:${subject}` : session.via === 'oidc' ? `oidc:${subject}` : subject;
}

/**
 * The sessions as an aligned text table, one line each under a header; a
 * line saying so when there are none. Every value the server sent is
 * escaped (`escapeCell`): a token's `sub` is whatever its issuer signed, and
 * a terminal would act on the escape sequences in it (erase the row, draw another).
 */
export function sessionsTable(sessions: Array<AdminSessionInfo & { node?: string }>, options: { nodes?: boolean } = {}): string {
  if (sessions.length === 0) return 'No live sessions.\n';
  // A cluster's list (hosting sessions --etcd) has the node first; a node does not report memory there.
  const node = (s: { node?: string }) => (options.nodes ? [escapeCell(String(s.node))] : []);
  const rows = [
    [...(options.nodes ? ['NODE'] : []), 'SESSION', 'TENANT', 'SUBJECT', 'RUNTIME', 'AGE', 'CALLS', 'MEMORY'],
    ...sessions.map((s) => [
      ...node(s),
      escapeCell(String(s.id)),
      escapeCell(String(s.tenant)),
      formatSubject(s),
      s.runtime !== undefined ? escapeCell(String(s.runtime)) : '-',
      formatAge(Number(s.ageMs)),
      escapeCell(String(s.calls)),
      formatMemory(typeof s.memoryBytes === 'number' ? s.memoryBytes : undefined),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')).join('\n') + '\n';
}
