import { isAbsolute } from 'node:path';
import { z } from 'zod';
import type { LiveOutput } from '../contracts/live-output.js';
import { ENV_NAME } from './environment.js';

/** Default inactivity limit: a command that prints nothing for this long is ended (today's Gemini CLI). */
export const DEFAULT_INACTIVITY_TIMEOUT_MS = 300_000;

/** Text a command line or a path may hold: NUL would cut it short where it reaches C. */
const withoutNul = z.string().refine((text) => !text.includes('\0'), { error: 'must not contain NUL characters' });

/**
 * One command for `ShellSessionHandle.run`: its fields, bounds and defaults.
 * `ShellRunOptions` (what callers pass) is derived from it.
 */
export const shellRunOptionsSchema = z
  .object({
    command: withoutNul.refine((command) => command.trim().length > 0, { error: 'must be a non-empty string' }),
    /** Working directory, relative to the workspace root (or absolute inside it). Default: the root. */
    cwd: withoutNul.default(''),
    /** Extra environment values for this command, on top of the allowlist. */
    env: z.record(z.string().regex(ENV_NAME, { error: 'must be a valid environment variable name' }), withoutNul).default({}),
    /**
     * `pty` (default): one stream through a terminal, rendered as a person
     * would see it; stdin reads end-of-file. `pipes`: separate stdout and
     * stderr as text, and `stdin` is written to the command.
     */
    mode: z.enum(['pty', 'pipes'], { error: "must be 'pty' or 'pipes'" }).default('pty'),
    /** Bytes for stdin (pipes mode only). */
    stdin: z.union([z.string(), z.instanceof(Uint8Array)], { error: 'must be a string or a Uint8Array' }).optional(),
    /** Start detached and return at once with its PID and log path; it ends with the session. */
    background: z.boolean().default(false),
    timeouts: z
      .object({
        /** End the command after this long without output. Default 300 000; 0 disables it. */
        inactivityMs: z.number().min(0).default(DEFAULT_INACTIVITY_TIMEOUT_MS),
        /** End the command after this long in total. Default: no limit. */
        wallMs: z.number().positive().optional(),
      })
      .prefault({}),
    /** Aborting ends the command's whole process tree; the result keeps the partial output. */
    signal: z.instanceof(AbortSignal).optional(),
    /** Throttled live output: the rendered text so far, or binary progress. */
    onOutput: z.custom<(output: LiveOutput) => void>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
    /**
     * Save the whole output to a file at `path` (an absolute path; the folder
     * is made when missing) once it passes `afterChars` characters; shorter
     * outputs never touch the disk. The shell thread writes it as it arrives,
     * as plain text (escape sequences removed, `\r` overwrites resolved, one
     * line per line the command wrote), up to the service's
     * `savedOutputMaxBytes`; `savedOutput` in the result says what it came to.
     * A binary output is not saved. Ignored for background runs.
     */
    saveOutput: z
      .object({
        path: withoutNul.refine(isAbsolute, { error: 'must be an absolute path' }),
        afterChars: z.number().int().min(1),
      })
      .optional(),
  })
  // A PTY's stdin always reads end-of-file, so stdin given with one would be silently lost.
  .refine((options) => options.stdin === undefined || options.mode === 'pipes', {
    error: "must not be given without mode 'pipes' (a PTY's stdin always reads end-of-file)",
    path: ['stdin'],
  });

/** One command for `ShellSessionHandle.run`. */
export type ShellRunOptions = z.input<typeof shellRunOptionsSchema>;
/** The options with defaults filled in. */
export type ParsedShellRunOptions = z.output<typeof shellRunOptionsSchema>;
