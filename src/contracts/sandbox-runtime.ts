import { z } from 'zod';

/**
 * The OCI runtime a sandbox container runs on: a name the Docker engine
 * knows (`runc`, its usual default, or `runsc` for gVisor once
 * `toolcell sandbox setup --runtime runsc` registered it). One schema for
 * every place that takes one: the Docker backend's options, a session's
 * own (`SessionLimits.runtime`), settings' `sandbox.runtime`, the tenants
 * file's `runtime` and the `--runtime` flags.
 */
export const sandboxRuntimeSchema = z
  .string()
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { error: 'must be a runtime name such as runsc or runc' });

/** The runtime toolcell knows by name: gVisor, whose kernel stands between commands and the host's. */
export const GVISOR_RUNTIME = 'runsc';

/**
 * How much a runtime keeps the host kernel out of reach, for the runtimes
 * toolcell knows: runc (and the engine's default, assumed to be runc) 0,
 * gVisor 1. Undefined for any other name: no order is known.
 */
export function runtimeStrength(name: string | undefined): number | undefined {
  if (name === undefined || name === 'runc') return 0;
  if (name === GVISOR_RUNTIME) return 1;
  return undefined;
}

/**
 * Whether a workspace's own settings may replace the user's runtime with
 * `wanted`: only by the same one or a known stronger one (runc → runsc),
 * never by a weaker or an unknown one. A repository must not take its
 * commands out of gVisor, nor onto a runtime the user never chose.
 */
export function mayTighten(user: string | undefined, wanted: string): boolean {
  if (wanted === user) return true;
  const from = runtimeStrength(user);
  const to = runtimeStrength(wanted);
  return from !== undefined && to !== undefined && to > from;
}

/** Where one tool call's command ran, for telemetry: the backend and, on Docker, the container's runtime. */
export interface CallSandbox {
  backend: 'docker' | 'host';
  /** The OCI runtime (`runc`, `runsc`); absent on the host. */
  runtime?: string;
}
