import { ToolErrorType, ToolcellError, errorMessage, joinSentences } from '../../errors.js';
import type { ShellBackend } from '../../backends/backend.js';
import { createHostBackend } from '../../backends/host/host-backend.js';
import { HOW_TO_GET_AN_ENGINE } from '../../backends/docker/engine-advice.js';
import type { SandboxMode } from '../run-types.js';

/**
 * The Docker backend (src/backends/docker/docker-backend.ts and probe.ts), loaded on
 * first use so that a host-only thread never loads dockerode.
 */
interface DockerModule {
  createDockerBackend(options: Record<string, unknown>): Promise<ShellBackend>;
  probeDocker(options?: { socketPath?: string }): Promise<unknown>;
}

/** Where a sandbox choice leads: a backend, or the reason there is none. */
export type ResolvedSandbox = { ok: true; backend: ShellBackend } | { ok: false; error: ToolcellError };

const HOW_TO_ENABLE = `${HOW_TO_GET_AN_ENGINE}; or pass \`--sandbox none\` to run commands on the host WITHOUT a sandbox, knowingly.`;

/**
 * Turns `docker` / `none` / `auto` into a backend, failing closed: `auto`
 * uses Docker when the engine answers and otherwise yields an error, never
 * the host. Backends are created once and shared by the sessions of the
 * thread.
 */
export class SandboxResolver {
  readonly #dockerOptions: Record<string, unknown>;
  #host: ShellBackend | undefined;
  #docker: Promise<ShellBackend> | undefined;
  #dockerModule: Promise<DockerModule> | undefined;

  constructor(options: { docker: Record<string, unknown> }) {
    this.#dockerOptions = options.docker;
  }

  async resolve(choice: SandboxMode): Promise<ResolvedSandbox> {
    if (choice === 'none') {
      this.#host ??= createHostBackend();
      return { ok: true, backend: this.#host };
    }
    if (choice === 'auto') {
      const available = await this.#probe();
      if (!available.ok) {
        return {
          ok: false,
          error: new ToolcellError(
            ToolErrorType.SANDBOX_UNAVAILABLE,
            joinSentences(`No sandbox is available for shell commands: ${available.reason}`, HOW_TO_ENABLE),
          ),
        };
      }
    }
    try {
      return { ok: true, backend: await this.#dockerBackend() };
    } catch (error) {
      return { ok: false, error: asSandboxError(error) };
    }
  }

  /** Closes every backend created so far. */
  async close(): Promise<void> {
    const closing: Array<Promise<void>> = [];
    if (this.#host) closing.push(this.#host.close());
    if (this.#docker)
      closing.push(
        this.#docker.then(
          (backend) => backend.close(),
          () => {},
        ),
      );
    await Promise.allSettled(closing);
  }

  #dockerBackend(): Promise<ShellBackend> {
    if (!this.#docker) {
      const creating = this.#loadDocker().then((module) => module.createDockerBackend(this.#dockerOptions));
      // A failed start (no engine, no image) is not cached: the next call tries again.
      creating.catch(() => {
        if (this.#docker === creating) this.#docker = undefined;
      });
      this.#docker = creating;
    }
    return this.#docker;
  }

  async #probe(): Promise<{ ok: true } | { ok: false; reason: string }> {
    let module: DockerModule;
    try {
      module = await this.#loadDocker();
    } catch (error) {
      return { ok: false, reason: errorMessage(error) };
    }
    try {
      const socketPath = this.#dockerOptions.socketPath;
      const answer = await module.probeDocker(typeof socketPath === 'string' ? { socketPath } : {});
      return probeVerdict(answer);
    } catch (error) {
      return { ok: false, reason: `the Docker engine does not answer (${errorMessage(error)})` };
    }
  }

  #loadDocker(): Promise<DockerModule> {
    this.#dockerModule ??= this.#importDocker().then(
      (module) => {
        if (typeof module.createDockerBackend !== 'function' || typeof module.probeDocker !== 'function') {
          throw new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, 'the Docker backend module is incomplete');
        }
        return module as DockerModule;
      },
      (error: unknown) => {
        throw new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, `the Docker backend is not available in this build (${errorMessage(error)})`);
      },
    );
    return this.#dockerModule;
  }

  async #importDocker(): Promise<Partial<DockerModule>> {
    const [backend, probe] = await Promise.all([import('../../backends/docker/docker-backend.js'), import('../../backends/docker/probe.js')]);
    return { createDockerBackend: backend.createDockerBackend as DockerModule['createDockerBackend'], probeDocker: probe.probeDocker };
  }
}

/** Reads the probe's answer (`DockerProbe` from src/backends/docker/probe.ts). */
function probeVerdict(answer: unknown): { ok: true } | { ok: false; reason: string } {
  const probe = (typeof answer === 'object' && answer !== null ? answer : {}) as { available?: unknown; reason?: unknown };
  if (probe.available === true) return { ok: true };
  return { ok: false, reason: typeof probe.reason === 'string' ? probe.reason : 'the Docker engine does not answer' };
}

function asSandboxError(error: unknown): ToolcellError {
  if (error instanceof ToolcellError) return error;
  return new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, joinSentences(`The Docker sandbox could not start: ${errorMessage(error)}`, HOW_TO_ENABLE));
}
