import type Docker from 'dockerode';
import { z } from 'zod';
import { parseOptions } from '../../contracts/parse-options.js';
import { createEngineClient, engineAddress, unreachableReason, type EngineOptions } from './engine.js';

/** What `probeDocker` found. */
export interface DockerProbe {
  /** True only when the engine answered in time. */
  available: boolean;
  /** Engine version, e.g. `20.10.24+dfsg1`. */
  version?: string;
  apiVersion?: string;
  /** The oldest API the engine still accepts. */
  minApiVersion?: string;
  /** Why it is not available (for messages). */
  reason?: string;
  /** The engine took the connection but did not answer in time: there, but busy or hung (not absent). */
  timedOut?: boolean;
}

/** Loose: callers pass their wider engine options (a build's, a backend's) as they are. */
const probeOptionsSchema = z.looseObject({
  socketPath: z.string().min(1).optional(),
  timeoutMs: z.number().int().min(1).default(3000),
});

/**
 * Asks the engine for its version, with a time limit. Never throws: any
 * failure is `{available: false, reason}`, so `--sandbox auto` fails closed.
 */
export async function probeDocker(options: EngineOptions & { timeoutMs?: number } = {}): Promise<DockerProbe> {
  const { timeoutMs } = parseOptions(probeOptionsSchema, options, 'probeDocker');
  const docker = createEngineClient(options);
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    // dockerode accepts an abortSignal here; its type declarations do not say so.
    const versionWithSignal = docker.version as unknown as (opts: { abortSignal: AbortSignal }) => Promise<Docker.DockerVersion>;
    const version = await versionWithSignal.call(docker, { abortSignal: abort.signal });
    return { available: true, version: version.Version, apiVersion: version.ApiVersion, minApiVersion: version.MinAPIVersion };
  } catch (error) {
    if (abort.signal.aborted)
      return { available: false, timedOut: true, reason: `The Docker engine at ${engineAddress(options)} did not answer within ${timeoutMs} ms` };
    return { available: false, reason: unreachableReason(error, options) };
  } finally {
    clearTimeout(timer);
  }
}

/** How long a start waits for an engine that is there but slow, and how long each ask may take. */
const PATIENCE_MS = 60_000;
const ASK_MS = 5000;

/**
 * probeDocker for a start (a backend, a hosting server): an engine that is
 * absent or refuses fails at once, as before; one that takes the
 * connection but answers late (a loaded host, dockerd still starting) is
 * asked again until `patienceMs` (default 60 s) has passed, and `onSlow` is
 * told once, so a busy machine delays a start instead of failing it (seen:
 * a hosting server refused to start under CI's load, its engine silent for
 * 5 s).
 */
export async function awaitEngine(options: EngineOptions & { patienceMs?: number; onSlow?: (reason: string) => void } = {}): Promise<DockerProbe> {
  const { patienceMs = PATIENCE_MS, onSlow, ...engine } = options;
  const deadline = Date.now() + patienceMs;
  for (let told = false; ; told = true) {
    const probe = await probeDocker({ ...engine, timeoutMs: Math.max(1, Math.min(ASK_MS, deadline - Date.now())) });
    if (probe.available || !probe.timedOut || Date.now() >= deadline) return probe;
    if (!told) onSlow?.(`${probe.reason}; asking again for up to ${Math.round(patienceMs / 1000)} s`);
  }
}
