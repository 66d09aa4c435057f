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
    const reason = abort.signal.aborted
      ? `The Docker engine at ${engineAddress(options)} did not answer within ${timeoutMs} ms`
      : unreachableReason(error, options);
    return { available: false, reason };
  } finally {
    clearTimeout(timer);
  }
}
