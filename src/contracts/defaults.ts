/**
 * Defaults several layers share, kept in one place. The supervisor in the
 * container (sandbox/supervisor/reaper.py) has its own copy of the kill
 * grace for KILL frames that carry none; the golden frames file
 * (test/fixtures/supervisor-frames.json) holds the value both ends test.
 */

/** SIGTERM → SIGKILL delay when a command's process tree is ended. */
export const DEFAULT_KILL_GRACE_MS = 200;

/** The terminal commands see (COLUMNS/LINES) and the renderer's scrollback, in columns, rows and lines. */
export const DEFAULT_TERMINAL = Object.freeze({ cols: 120, rows: 30, scrollback: 1000 });

/**
 * The longest shell command toolcell takes, in UTF-8 bytes: Linux's limit
 * on one argument of execve (MAX_ARG_STRLEN, 32 pages = 131,072 bytes with
 * the terminating NUL). Every command runs as `bash -c COMMAND`, so a longer
 * one could never start (E2BIG); refusing it up front (`command_too_long`)
 * also bounds what the policy engine parses for one call.
 */
export const MAX_COMMAND_BYTES = 131_071;

/**
 * The OS priority (nice) of the server's threads that do work a caller
 * chose: long commands' policy parsing, a hosting server's file tools, the
 * encoding of large answers. Below the event loop and the shell thread,
 * which every tenant's calls go through, so that on a busy host that work
 * waits for them, never the other way round.
 */
export const CHOSEN_WORK_THREAD_NICE = 10;
