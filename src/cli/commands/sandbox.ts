import type { Command } from 'commander';
import { isToolcellError } from '../../errors.js';
// The sandbox modules (dockerode) are imported by the actions that use them,
// so `--help` and `--version` start fast.
import type { BuildSandboxImageOptions } from '../../sandbox/build.js';
import type { EngineOptions } from '../../sandbox/engine.js';
import type { SandboxImageStatus } from '../../sandbox/image.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';

interface EngineCliOptions {
  socket?: string;
}

function engineOptions(options: EngineCliOptions): EngineOptions {
  return options.socket ? { socketPath: options.socket } : {};
}

function fail(command: string, error: unknown): void {
  const code = isToolcellError(error) ? ` [${(error as { code: string }).code}]` : '';
  process.stderr.write(`toolcell sandbox ${command}: ${(error as Error).message ?? String(error)}${code}\n`);
  process.exitCode = EXIT_FAILURE;
}

/** Sandbox containers in the engine: those of live toolcell processes and leftovers of dead ones. */
async function countContainers(engine: EngineOptions): Promise<{ live: number; leftovers: number }> {
  const [{ createEngineClient }, { LABELS, ownerAlive }] = await Promise.all([import('../../sandbox/engine.js'), import('../../sandbox/labels.js')]);
  const docker = createEngineClient(engine);
  const containers = await docker.listContainers({ all: true, filters: { label: [`${LABELS.sandbox}=1`] } });
  const leftovers = containers.filter((info) => !ownerAlive(info.Labels ?? {})).length;
  return { live: containers.length - leftovers, leftovers };
}

function describeStatus(status: SandboxImageStatus, containers: { live: number; leftovers: number } | undefined, address: string): string {
  const lines: string[] = [];
  const { engine } = status;
  lines.push(
    engine.available
      ? `engine:     answers at ${address} (Docker ${engine.version}, API ${engine.apiVersion})`
      : `engine:     not available: ${engine.reason}`,
  );
  if (engine.available) {
    lines.push(`image:      ${status.expected} ${status.present ? 'present' : 'missing: run `toolcell sandbox build`'}`);
    if (status.stale.length > 0) lines.push(`stale:      ${status.stale.join(', ')} (older recipes; \`docker rmi\` them)`);
    lines.push(
      `bases:      toolcell-base:bookworm ${status.bases.offline ? 'present' : 'missing'}, debian:bookworm-slim ${status.bases.registry ? 'present' : 'missing'}`,
    );
  }
  if (containers) lines.push(`containers: ${containers.live} in use, ${containers.leftovers} left over (\`toolcell sandbox clean\` removes them)`);
  lines.push(`ready:      ${engine.available && status.present ? 'yes' : 'no'}`);
  return `${lines.join('\n')}\n`;
}

function registerBuild(sandbox: Command): void {
  sandbox
    .command('build')
    .description(
      'Build the sandbox image (toolcell-sandbox:<recipe hash>) from sandbox/. Without options it uses debian:bookworm-slim ' +
        'when available, else builds a base from Debian packages (debootstrap; needs root and an apt mirror).',
    )
    .option('--offline', 'build the base from Debian packages (debootstrap + docker import) instead of pulling it')
    .option('--base <image>', 'base image for the Dockerfile (default: debian:bookworm-slim or the offline base)')
    .option('--rebuild-base', 'with --offline: rebuild toolcell-base:bookworm even if it exists')
    .option('--socket <path>', 'Docker engine socket (default: DOCKER_HOST or /var/run/docker.sock)')
    .exitOverride()
    .action(async (options: EngineCliOptions & { offline?: boolean; base?: string; rebuildBase?: boolean }) => {
      if (options.offline && options.base) {
        process.stderr.write('toolcell sandbox build: --offline and --base exclude each other\n');
        process.exitCode = EXIT_USAGE;
        return;
      }
      const build: BuildSandboxImageOptions = {
        ...engineOptions(options),
        onProgress: (line) => process.stderr.write(`${line}\n`),
      };
      if (options.offline) build.offline = true;
      if (options.base) build.base = options.base;
      if (options.rebuildBase) build.rebuildBase = true;
      try {
        const { buildSandboxImage } = await import('../../sandbox/build.js');
        const result = await buildSandboxImage(build);
        process.stderr.write(`built ${result.tag} (base ${result.base})\n`);
        process.stdout.write(`${result.tag}\n`);
        process.exitCode = EXIT_OK;
      } catch (error) {
        fail('build', error);
      }
    });
}

function registerStatus(sandbox: Command): void {
  sandbox
    .command('status')
    .description('Say whether the Docker engine answers, whether the sandbox image for this version is built or stale, and list leftover containers. Exit code 0 when ready, 1 when not.')
    .option('--json', 'print the status as JSON')
    .option('--socket <path>', 'Docker engine socket (default: DOCKER_HOST or /var/run/docker.sock)')
    .exitOverride()
    .action(async (options: EngineCliOptions & { json?: boolean }) => {
      const engine = engineOptions(options);
      try {
        const [{ sandboxImageStatus }, { engineAddress }] = await Promise.all([import('../../sandbox/image.js'), import('../../sandbox/engine.js')]);
        const status = await sandboxImageStatus(engine);
        const containers = status.engine.available ? await countContainers(engine) : undefined;
        const ready = status.engine.available && status.present;
        if (options.json) {
          const report = { ready, engine: { address: engineAddress(engine), ...status.engine }, image: { expected: status.expected, present: status.present, stale: status.stale }, bases: status.bases, containers: containers ?? null };
          process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        } else {
          process.stdout.write(describeStatus(status, containers, engineAddress(engine)));
        }
        process.exitCode = ready ? EXIT_OK : EXIT_FAILURE;
      } catch (error) {
        fail('status', error);
      }
    });
}

function registerClean(sandbox: Command): void {
  sandbox
    .command('clean')
    .description('Remove sandbox containers left behind by toolcell processes that are no longer running.')
    .option('--all', 'remove every toolcell sandbox container, also those of running toolcell processes')
    .option('--json', 'print {removed, kept} as JSON')
    .option('--socket <path>', 'Docker engine socket (default: DOCKER_HOST or /var/run/docker.sock)')
    .exitOverride()
    .action(async (options: EngineCliOptions & { all?: boolean; json?: boolean }) => {
      const engine = engineOptions(options);
      try {
        const [{ engineCall, createEngineClient }, { removeLeftoverContainers }] = await Promise.all([import('../../sandbox/engine.js'), import('../../sandbox/cleanup.js')]);
        const result = await engineCall(engine, () => removeLeftoverContainers(createEngineClient(engine), { all: options.all === true }));
        if (options.json) process.stdout.write(`${JSON.stringify(result)}\n`);
        else process.stdout.write(`removed ${result.removed.length} container(s)${result.removed.length ? `: ${result.removed.join(' ')}` : ''}; kept ${result.kept} in use\n`);
        process.exitCode = EXIT_OK;
      } catch (error) {
        fail('clean', error);
      }
    });
}

/** Registers `toolcell sandbox build|status|clean`. */
export function registerSandboxCommand(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description('Manage the Docker sandbox that shell commands run in: build its image, check its status, clean up containers.')
    .exitOverride();
  registerBuild(sandbox);
  registerStatus(sandbox);
  registerClean(sandbox);
}
