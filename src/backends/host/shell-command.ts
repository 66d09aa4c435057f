import { existsSync } from 'node:fs';
import { basename } from 'node:path';

/** The shell commands run under on the host: bash when present (like Gemini CLI), else POSIX sh. */
export function hostShell(): string {
  return existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
}

/**
 * Arguments that run `command` in a PTY under a small wrapper, the PTY's
 * session leader:
 *
 * - Nothing can wait for input: the command's stdin is /dev/null, and the
 *   terminal is switched to non-canonical reads with MIN=0/TIME=0, so a
 *   program that opens /dev/tty for a password (sudo, ssh) reads
 *   end-of-file at once instead of hanging.
 * - Output post-processing is off (`-opost`): the kernel's LF→CRLF mapping
 *   costs about 30x throughput on short lines, and the renderer treats LF
 *   as CRLF anyway. Echo is off: nobody types.
 * - When the session leader exits, the kernel hangs the terminal up and
 *   discards output not read yet. So the command runs as a child
 *   (`<shell> -c command`); afterwards the wrapper prints `endMarker` and
 *   waits for one line on the terminal, which the reader writes once it has
 *   read up to the marker. Only then does the wrapper exit, with the
 *   command's status. (Job-control stop signals are ignored for that last
 *   step, so a command that left the terminal to another process group
 *   cannot stop the wrapper; its read then fails instead of waiting.)
 */
export function ptyShellArgs(shell: string, command: string, endMarker: string): string[] {
  const wrapper = [
    'stty -opost -echo -icanon min 0 time 0 2>/dev/null',
    // The wrapper's own stderr is muted (bash would report "Killed" for a
    // command ended by a signal); the command's goes through fd 3.
    '{ "$0" -c "$1" </dev/null 2>&3 3>&-; } 3>&2 2>/dev/null',
    'rc=$?',
    "trap '' TTIN TTOU",
    'printf %s "$2"',
    'stty icanon 2>/dev/null && read -r _ </dev/tty',
    'exit $rc',
  ].join('; ');
  return ['-c', wrapper, shell, command, endMarker];
}

/**
 * Arguments that run `command` with plain pipes (pipes mode, background
 * jobs). Node's stdio pipes are socket pairs, and Debian's bash sources
 * ~/.bashrc when its stdin is a socket (it takes it for rshd/sshd), even
 * with -c: a .bashrc that waits on stdin (pyenv's init did) hung every
 * command. `--norc` turns that off; POSIX sh reads no such file.
 */
export function pipeShellArgs(shell: string, command: string): string[] {
  return basename(shell) === 'bash' ? ['--norc', '-c', command] : ['-c', command];
}
