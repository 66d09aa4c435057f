import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { DEFAULT_KILL_GRACE_MS, DEFAULT_TERMINAL } from '../contracts/defaults.js';
import { integerOption } from '../contracts/parse-options.js';
import { SANDBOX_MODES } from '../contracts/sandbox-mode.js';
import { sessionLimitsSchema } from '../backends/session-limits.js';
import { secretNameProblem, secretValueProblem } from '../secrets/secret-rules.js';
import { DEFAULT_RENDER_BUDGET_MS } from './output/parse-budget.js';

/** Default size cap of a saved output's file. */
export const DEFAULT_SAVED_OUTPUT_MAX_BYTES = 64 * 1024 * 1024;
/** Smallest cap accepted: room for a screenful of lines before the closing line. */
export const MIN_SAVED_OUTPUT_MAX_BYTES = 1024;

/**
 * The options of `ShellService.create`, their bounds and their defaults, in
 * one place; `ShellServiceOptions` (what callers pass) is derived from it.
 */
export const shellServiceOptionsSchema = z.object({
  /** Minimum time between two live-output updates of one command. Default 1000, as Gemini CLI: more often redraws the chat for little news. */
  liveUpdateIntervalMs: integerOption(0, 1000),
  /** Lines in a live-output update. Default 200. */
  liveLines: integerOption(1, 200),
  /** Output bytes rendered per command; past this they are counted, and the last `outputTailBytes` kept. Default 8 MiB. */
  maxOutputBytes: integerOption(1, 8 * 1024 * 1024),
  /** Bytes kept from the end of an output that passed `maxOutputBytes`. Default 64 KiB. */
  outputTailBytes: integerOption(0, 64 * 1024),
  /** Characters of rendered text kept per command: half from the start, half from the end. Default 1 000 000. */
  maxOutputChars: integerOption(2, 1_000_000),
  /** Terminal size commands see (COLUMNS/LINES), and the renderer's scrollback. Default 120 × 30, 1000 lines. */
  terminal: z
    .object({
      cols: integerOption(20, DEFAULT_TERMINAL.cols, 2000),
      rows: integerOption(5, DEFAULT_TERMINAL.rows, 1000),
      scrollback: integerOption(100, DEFAULT_TERMINAL.scrollback, 100_000),
    })
    .prefault({}),
  /**
   * Milliseconds the headless terminal may spend emulating one command's
   * output; past it the rest is counted and only its end is shown. Bounds
   * what escape sequences that are cheap to send and costly to emulate can
   * take from the shell thread. Default 10 000.
   */
  renderBudgetMs: integerOption(1, DEFAULT_RENDER_BUDGET_MS),
  /**
   * Size cap of a saved output's file (`saveOutput` of a run): past it the
   * file ends with a line saying where it was cut and how much was dropped.
   * Default 64 MiB.
   */
  savedOutputMaxBytes: integerOption(MIN_SAVED_OUTPUT_MAX_BYTES, DEFAULT_SAVED_OUTPUT_MAX_BYTES),
  /**
   * Past what a command's output can still be used for (`maxOutputBytes`, or
   * a saved output's cap), bytes per second the container reads from it; a
   * slower reader blocks the command, as a slow terminal does. Below that
   * point output is read as fast as it comes; past it, it is only counted
   * in the container and its end kept. 0 (default): as fast as it writes.
   * A server shared by tenants sets it: a flood then takes its own time,
   * not the host's CPU (the kernel's terminal work is charged to nobody's
   * container).
   */
  drainBytesPerSecond: integerOption(0, 0),
  /** Host environment variables passed into commands, by name. Nothing else of the host's environment is. */
  passEnv: z.array(z.string()).default([]),
  /** SIGTERM → SIGKILL delay when a command is ended. Default 200. */
  killGraceMs: integerOption(0, DEFAULT_KILL_GRACE_MS),
  /** Options for the Docker backend (`createDockerBackend`), passed through. Must be structured-cloneable. */
  docker: z.record(z.string(), z.unknown()).default({}),
});

/** What `ShellService.create` accepts; every field is optional. */
export type ShellServiceOptions = z.input<typeof shellServiceOptionsSchema>;

/** The options of `ShellService.openSession`. */
export const openSessionOptionsSchema = z
  .object({
    /** `docker`, `none` (the host, no isolation: only when the user named it) or `auto` (default: Docker when the engine answers). */
    sandbox: z.enum(SANDBOX_MODES, { error: "must be 'docker', 'none' or 'auto'" }).default('auto'),
    /** The workspace the session's commands run in (mounted at the same path in a container). */
    workspaceRoot: z.string().refine(isAbsolute, { error: 'must be an absolute path' }),
    /** The session's id, unique in the service. Default: a random UUID. */
    sessionId: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,128}$/, { error: 'must be 1-128 characters of A-Z a-z 0-9 . _ -' })
      .optional(),
    /**
     * This session's container limits (`memory`, `cpus`, `pids`, …), over
     * the Docker backend's `limits` (which stay the default for a field left
     * out). Lets one service host tenants with different limits.
     */
    limits: sessionLimitsSchema.optional(),
    /**
     * Wait for the sandbox (a container start) before resolving. Default true.
     * False: resolve once the backend is known; the container starts in the
     * background and the first run waits for it (and fails with its error if
     * it could not start). A server answering a burst of new sessions then
     * does not hold each handshake for a container start.
     */
    awaitSandbox: z.boolean().default(true),
    /**
     * Secrets for this session's commands: set in each command's environment
     * (over everything else), and redacted from everything the session's
     * commands print (live output, the result, the saved output file), in the
     * shell thread, before it leaves it. Values never appear in an error.
     */
    secrets: z
      .record(z.string(), z.string())
      .superRefine((secrets, context) => {
        for (const [name, value] of Object.entries(secrets)) {
          const problem = secretNameProblem(name) ?? (typeof value === 'string' ? secretValueProblem(value) : 'must be a string');
          if (problem) context.addIssue({ code: 'custom', path: [name], message: problem });
        }
      })
      .optional(),
  })
  // The host has no container to hold limits: asking for them there must not silently run without them.
  .refine((options) => options.limits === undefined || options.sandbox !== 'none', {
    error: "must not be set with sandbox 'none': container limits need the Docker sandbox",
    path: ['limits'],
  });

export type OpenSessionOptions = z.input<typeof openSessionOptionsSchema>;
