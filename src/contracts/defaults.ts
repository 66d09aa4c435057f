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
