import { existsSync } from 'node:fs';

/** The shell commands run under on the host: bash when present (like Gemini CLI), else POSIX sh. */
export function hostShell(): string {
  return existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
}

/**
 * Arguments that run `command` in a PTY so that nothing can wait for input:
 * stdin is /dev/null, and the terminal itself is switched to non-canonical
 * reads with MIN=0/TIME=0, so a program that opens /dev/tty for a password
 * (sudo, ssh) reads end-of-file at once instead of hanging. Output
 * post-processing is switched off (`-opost`): the kernel's LF→CRLF mapping
 * costs about 30x throughput on short lines, and the renderer treats LF as
 * CRLF anyway. The command then runs as `<shell> -c command`, as usual.
 */
export function ptyShellArgs(shell: string, command: string): string[] {
  const setup = `stty -opost -icanon min 0 time 0 2>/dev/null; exec "$0" -c "$1" </dev/null`;
  return ['-c', setup, shell, command];
}

/** Arguments that run `command` with plain pipes (pipes mode, background jobs). */
export function pipeShellArgs(command: string): string[] {
  return ['-c', command];
}
