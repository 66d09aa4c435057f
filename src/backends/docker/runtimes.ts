import { basename } from 'node:path';
import type Docker from 'dockerode';
import { GVISOR_RUNTIME } from '../../contracts/sandbox-runtime.js';
import { ToolcellError, ToolErrorType } from '../../errors.js';

/**
 * The OCI runtimes a Docker engine knows (daemon.json `runtimes`, plus runc),
 * and which one a session's container gets.
 *
 * gVisor needs two registrations on some kernels (Debian's runsc
 * 0.0~20221219 on Linux 6.x, DESIGN.md fact 16): its own network stack
 * refuses to start there, so `runsc` is registered with `--network=none`
 * (sessions without network, the default) and `runsc-egress` with the
 * network mode the kernel allows, for sessions on an egress network
 * (`toolcell sandbox setup --runtime runsc` registers both, setup-runtime.ts).
 * A session with egress uses `<runtime>-egress` when the engine has it.
 */

/** One runtime as the engine lists it. */
export interface EngineRuntime {
  name: string;
  /** The executable (`runc`, `/usr/bin/runsc`). */
  path: string;
  /** Arguments the engine adds to every call (daemon.json `runtimeArgs`). */
  args: string[];
  /** True for gVisor (the executable is runsc). */
  gvisor: boolean;
}

/** What the engine says about its runtimes. */
export interface EngineRuntimes {
  /** The engine's default runtime (`runc` unless daemon.json says otherwise). */
  defaultName: string;
  runtimes: Map<string, EngineRuntime>;
}

/** The suffix of a runtime's companion for sessions with egress. */
export const EGRESS_RUNTIME_SUFFIX = '-egress';

/** Reads the engine's runtimes (`docker info`). */
export async function readEngineRuntimes(docker: Docker): Promise<EngineRuntimes> {
  const info = (await docker.info()) as { Runtimes?: Record<string, { path?: string; runtimeArgs?: string[] }>; DefaultRuntime?: string };
  const runtimes = new Map<string, EngineRuntime>();
  for (const [name, entry] of Object.entries(info.Runtimes ?? {})) {
    const path = entry.path ?? name;
    runtimes.set(name, { name, path, args: entry.runtimeArgs ?? [], gvisor: isGvisorPath(path) });
  }
  return { defaultName: info.DefaultRuntime ?? 'runc', runtimes };
}

/** True when a runtime executable is gVisor's. */
export function isGvisorPath(path: string): boolean {
  return basename(path) === GVISOR_RUNTIME;
}

/** How to give the engine a runtime it lacks, in one sentence. */
export function runtimeSetupHint(name: string): string {
  if (name === GVISOR_RUNTIME || name === `${GVISOR_RUNTIME}${EGRESS_RUNTIME_SUFFIX}`)
    return "set it up with `toolcell sandbox setup --runtime runsc` (installs Debian's runsc and registers it; root)";
  return 'register it in /etc/docker/daemon.json ("runtimes") and reload the engine (kill -HUP $(pidof dockerd))';
}

/** The one-line `sandbox_unavailable` error for a runtime the engine does not have. */
export function missingRuntimeError(name: string, known: Iterable<string>): ToolcellError {
  const list = [...known].sort().join(', ') || 'none';
  return new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, `The Docker engine has no runtime named ${name} (it has: ${list}): ${runtimeSetupHint(name)}.`);
}

/** The runtime a session's container runs on. */
export interface SessionRuntime {
  /** The name the session asked for, or the engine's default. */
  name: string;
  /** The name given to the engine (`HostConfig.Runtime`): the egress companion when there is one; undefined: the default. */
  engineName?: string;
  gvisor: boolean;
}

/**
 * The engine's runtimes, read once and again when a name is not found (it
 * may have been registered since), and the choice for each session.
 */
export class RuntimeCatalog {
  readonly #docker: Docker;
  #current: Promise<EngineRuntimes> | undefined;

  constructor(docker: Docker) {
    this.#docker = docker;
  }

  /** The engine's runtimes as last read. */
  list(): Promise<EngineRuntimes> {
    this.#current ??= readEngineRuntimes(this.#docker);
    this.#current.catch(() => (this.#current = undefined));
    return this.#current;
  }

  /**
   * The runtime for a session: `name` (undefined: the engine's default) and,
   * with `egress`, its egress companion when registered. Throws the
   * one-line `sandbox_unavailable` error when the engine has no such runtime.
   */
  async resolve(name: string | undefined, options: { egress: boolean }): Promise<SessionRuntime> {
    let known = await this.list();
    if (name !== undefined && !known.runtimes.has(name)) {
      this.#current = undefined;
      known = await this.list();
      if (!known.runtimes.has(name)) throw missingRuntimeError(name, known.runtimes.keys());
    }
    const chosen = known.runtimes.get(name ?? known.defaultName);
    const gvisor = chosen?.gvisor ?? false;
    if (name === undefined) return { name: known.defaultName, gvisor };
    const companion = `${name}${EGRESS_RUNTIME_SUFFIX}`;
    const engineName = options.egress && known.runtimes.has(companion) ? companion : name;
    return { name, engineName, gvisor };
  }
}

/**
 * Refuses a runtime the engine does not have, before anything runs (the
 * `--runtime` flags, settings' `sandbox.runtime`): the one-line
 * `sandbox_unavailable` error. An engine that does not answer is left to
 * the sandbox's own checks (`auto` then refuses commands, `docker` fails).
 */
export async function assertRuntimeAvailable(name: string, engine: { socketPath?: string } = {}): Promise<void> {
  const { probeDocker } = await import('./probe.js');
  if (!(await probeDocker({ ...engine, timeoutMs: 5000 })).available) return;
  const { createEngineClient } = await import('./engine.js');
  await new RuntimeCatalog(createEngineClient(engine)).resolve(name, { egress: false });
}
