import type { EngineOptions } from '../../backends/docker/engine.js';
import { imageExists, sandboxImageTag } from '../../backends/docker/image.js';
import { probeDocker } from '../../backends/docker/probe.js';
import { errorMessage } from '../../errors.js';
import type { Readiness, ReadinessCheck } from './health-handlers.js';

export interface DockerReadinessOptions {
  engine?: EngineOptions;
  /** The image sessions start from; default the one this recipe builds. */
  image?: string;
  /** How long the engine may take to answer; default 2000 ms. */
  timeoutMs?: number;
}

/**
 * The hosting server is ready when the Docker engine answers and the sandbox
 * image is present: then a new session can start its container. Never throws.
 */
export function dockerReadiness(options: DockerReadinessOptions = {}): ReadinessCheck {
  const engine = options.engine ?? {};
  const image = options.image ?? sandboxImageTag();
  return async (): Promise<Readiness> => {
    const probe = await probeDocker({ ...engine, timeoutMs: options.timeoutMs ?? 2000 });
    if (!probe.available) {
      return {
        ready: false,
        checks: { engine: { ok: false, detail: probe.reason ?? 'not available' }, image: { ok: false, detail: `${image}: engine not available` } },
      };
    }
    const engineCheck = { ok: true, detail: `Docker ${probe.version ?? '?'} (API ${probe.apiVersion ?? '?'})` };
    try {
      const present = await imageExists(engine, image);
      return {
        ready: present,
        checks: { engine: engineCheck, image: { ok: present, detail: present ? image : `${image} is missing: run \`toolcell sandbox build\`` } },
      };
    } catch (error) {
      return { ready: false, checks: { engine: engineCheck, image: { ok: false, detail: `${image}: ${errorMessage(error)}` } } };
    }
  };
}
