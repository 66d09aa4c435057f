import { execFile } from 'node:child_process';
import type { EngineOptions } from './engine.js';

/** The `docker` command-line client on PATH, as `toolcell sandbox status` reports it. */
export type DockerCliProbe =
  | {
      found: true;
      version: string;
      /** The newest API the client speaks. */
      defaultApiVersion: string;
      /** The API it speaks with this engine: lower than the default when it negotiated down (client 28 with engine 20.10: 1.41). */
      apiVersion: string;
    }
  | { found: false; reason: string };

interface ClientVersion {
  Version?: unknown;
  ApiVersion?: unknown;
  DefaultAPIVersion?: unknown;
}

/**
 * Asks the `docker` client on PATH for its version against the engine
 * toolcell uses. toolcell itself talks to the engine through dockerode
 * (whatever API the engine offers), so the client is only reported: the
 * image's offline base (sandbox/build-base.sh) and people's own commands
 * use it, and it often differs from the engine (a new machine here ships
 * client 28.2 beside Debian's engine 20.10). Never throws.
 */
export function probeDockerCli(options: EngineOptions & { timeoutMs?: number } = {}): Promise<DockerCliProbe> {
  const env = { ...process.env };
  if (options.socketPath) env['DOCKER_HOST'] = `unix://${options.socketPath}`;
  return new Promise((resolve) => {
    // `docker version` exits 1 without an engine but still prints the client's half.
    execFile('docker', ['version', '--format', '{{json .Client}}'], { env, timeout: options.timeoutMs ?? 5000 }, (error, stdout) => {
      let client: ClientVersion | undefined;
      try {
        client = JSON.parse(stdout) as ClientVersion;
      } catch {
        client = undefined;
      }
      if (!client || typeof client.Version !== 'string') {
        const code = (error as { code?: unknown } | null)?.code;
        resolve({ found: false, reason: code === 'ENOENT' ? 'no docker command on PATH' : `docker version failed (${error?.message ?? 'no output'})` });
        return;
      }
      const api = typeof client.ApiVersion === 'string' ? client.ApiVersion : '';
      resolve({
        found: true,
        version: client.Version,
        apiVersion: api,
        defaultApiVersion: typeof client.DefaultAPIVersion === 'string' ? client.DefaultAPIVersion : api,
      });
    });
  });
}
