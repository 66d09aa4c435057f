import { ToolErrorType, ToolcellError, errorMessage } from '../../errors.js';
import type { ShellBackend } from '../backend.js';
import { createHostBackend } from '../host/host-backend.js';
import type { SandboxChoice } from '../run-types.js';

/** The Docker helper's module (src/sandbox/docker-backend.ts), loaded on first use. */
interface DockerModule {
  createDockerBackend(options: Record<string, unknown>): Promise<ShellBackend>;
  probeDocker(options?: Record<string, unknown>): Promise<unknown>;
}

/** Where a sandbox choice leads: a backend, or the reason there is none. */
export type ResolvedSandbox = { ok: true; backend: ShellBackend } | { ok: false; error: ToolcellError };

const HOW_TO_ENABLE =
  'Install and start Docker, then run `toolcell sandbox build`; or pass `--sandbox none` to run commands on the host WITHOUT a sandbox, knowingly.';

/**
 * Turns `docker` / `none` / `auto` into a backend, failing closed: `auto`
 * uses Docker when the engine answers and otherwise yields an error, never
 * the host. Backends are created once and shared by the sessions of the
 * thread.
 */
export class SandboxResolver {
  readonly #dockerOptions: Record<string, unknown>;
  readonly #dockerModuleUrl: string;
  #host: ShellBackend | undefined;
  #docker: Promise<ShellBackend> | undefined;
  #dockerModule: Promise<DockerModule> | undefined;

  constructor(options: { docker: Record<string, unknown>; dockerModule?: string }) {
    this.#dockerOptions = options.docker;
    this.#dockerModuleUrl = options.dockerModule ?? new URL('../../sandbox/docker-backend.js', import.meta.url).href;
  }

  async resolve(choice: SandboxChoice): Promise<ResolvedSandbox> {
    if (choice === 'none') {
      this.#host ??= createHostBackend();
      return { ok: true, backend: this.#host };
    }
    if (choice === 'auto') {
      const available = await this.#probe();
      if (!available.ok) {
        return {
          ok: false,
          error: new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, `No sandbox is available for shell commands: ${available.reason}. ${HOW_TO_ENABLE}`),
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
    if (this.#docker) closing.push(this.#docker.then((backend) => backend.close(), () => {}));
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
      const answer = await module.probeDocker(this.#dockerOptions);
      return probeVerdict(answer);
    } catch (error) {
      return { ok: false, reason: `the Docker engine does not answer (${errorMessage(error)})` };
    }
  }

  #loadDocker(): Promise<DockerModule> {
    this.#dockerModule ??= import(this.#dockerModuleUrl).then(
      (module: Partial<DockerModule>) => {
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
}

/** Reads the probe's answer: a boolean, or an object with `ok`/`available` and a reason. */
function probeVerdict(answer: unknown): { ok: true } | { ok: false; reason: string } {
  if (answer === true) return { ok: true };
  if (typeof answer === 'object' && answer !== null) {
    const record = answer as Record<string, unknown>;
    const ok = record.ok ?? record.available ?? record.reachable;
    if (ok === true) return { ok: true };
    const reason = record.reason ?? record.message ?? record.error;
    return { ok: false, reason: typeof reason === 'string' ? reason : 'the Docker engine does not answer' };
  }
  return { ok: false, reason: 'the Docker engine does not answer' };
}

function asSandboxError(error: unknown): ToolcellError {
  if (error instanceof ToolcellError) return error;
  return new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, `The Docker sandbox could not start: ${errorMessage(error)}. ${HOW_TO_ENABLE}`);
}
