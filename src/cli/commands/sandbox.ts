import type { Command } from 'commander';
import { GVISOR_RUNTIME } from '../../contracts/sandbox-runtime.js';
import { isToolcellError } from '../../errors.js';
// The sandbox modules (dockerode) are imported by the actions that use them,
// so `--help` and `--version` start fast.
import type { BuildSandboxImageOptions, BuildSandboxImageResult } from '../../backends/docker/build.js';
import type { DockerCliProbe } from '../../backends/docker/docker-cli.js';
import type { EngineOptions } from '../../backends/docker/engine.js';
import type { SandboxImageStatus } from '../../backends/docker/image.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';

interface EngineCliOptions {
  socket?: string;
}

function engineOptions(options: EngineCliOptions): EngineOptions {
  return options.socket ? { socketPath: options.socket } : {};
}

function fail(command: string, error: unknown): void {
  const code = isToolcellError(error) ? ` [${error.code}]` : '';
  process.stderr.write(`toolcell sandbox ${command}: ${(error as Error).message ?? String(error)}${code}\n`);
  process.exitCode = EXIT_FAILURE;
}

/** Sandbox containers in the engine: those of live toolcell processes and leftovers of dead ones. */
async function countContainers(engine: EngineOptions): Promise<{ live: number; leftovers: number }> {
  const [{ createEngineClient }, { LABELS, ownerAlive }] = await Promise.all([
    import('../../backends/docker/engine.js'),
    import('../../backends/docker/labels.js'),
  ]);
  const docker = createEngineClient(engine);
  const containers = await docker.listContainers({ all: true, filters: { label: [`${LABELS.sandbox}=1`] } });
  const leftovers = containers.filter((info) => !ownerAlive(info.Labels ?? {})).length;
  return { live: containers.length - leftovers, leftovers };
}

function describeClient(client: DockerCliProbe): string {
  if (!client.found) return `client:     ${client.reason} (toolcell does not need one: it talks to the engine's API itself)`;
  const negotiated = client.apiVersion !== client.defaultApiVersion ? `, negotiated down to ${client.apiVersion} with this engine` : '';
  return `client:     docker ${client.version} (API ${client.defaultApiVersion}${negotiated})`;
}

/** The engine's runtimes and the one toolcell uses here, for `sandbox status`. */
interface RuntimeStatus {
  runtimes: Array<{ name: string; path: string; args: string[]; gvisor: boolean; default: boolean }>;
  /** The runtime settings name (undefined: the engine's default), where that came from, and whether the engine has it. */
  used: { name: string; source: string; available: boolean };
}

/** What settings (the user's, and this folder's as a workspace) choose, checked against the engine's list. */
async function runtimeStatus(engine: EngineOptions): Promise<RuntimeStatus> {
  const [{ readEngineRuntimes }, { createEngineClient }, { loadSettings }] = await Promise.all([
    import('../../backends/docker/runtimes.js'),
    import('../../backends/docker/engine.js'),
    import('../../config/load-settings.js'),
  ]);
  const listed = await readEngineRuntimes(createEngineClient(engine));
  const runtimes = [...listed.runtimes.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((entry) => ({ ...entry, default: entry.name === listed.defaultName }));
  let named: string | undefined;
  let source = "the engine's default";
  try {
    const settings = loadSettings({ workspace: process.cwd() });
    named = settings.sandbox.runtime;
    if (named !== undefined) source = `sandbox.runtime in ${settings.sources.join(', ')}`;
  } catch (error) {
    source = `the engine's default (settings unreadable: ${(error as Error).message})`;
  }
  const name = named ?? listed.defaultName;
  return { runtimes, used: { name, source, available: listed.runtimes.has(name) } };
}

function describeRuntimes(status: RuntimeStatus): string[] {
  const list = status.runtimes.map((entry) => {
    const notes = [entry.default ? 'default' : '', entry.gvisor ? 'gVisor' : '', entry.args.join(' ')].filter(Boolean);
    return `${entry.name}${notes.length ? ` (${notes.join(', ')})` : ''}`;
  });
  const { used } = status;
  const missing = used.available
    ? ''
    : `: missing, ${used.name === GVISOR_RUNTIME ? 'run `toolcell sandbox setup --runtime runsc`' : 'register it in daemon.json'}`;
  return [`runtimes:   ${list.join(', ') || 'none'}`, `runtime:    ${used.name} (${used.source})${missing}`];
}

function describeStatus(
  status: SandboxImageStatus,
  client: DockerCliProbe,
  containers: { live: number; leftovers: number } | undefined,
  address: string,
  runtimes: RuntimeStatus | undefined,
): string {
  const lines: string[] = [];
  const { engine } = status;
  const oldest = engine.minApiVersion ? `; accepts API ${engine.minApiVersion} and later` : '';
  lines.push(
    engine.available
      ? `engine:     answers at ${address} (Docker ${engine.version}, API ${engine.apiVersion}${oldest})`
      : `engine:     not available: ${engine.reason}`,
  );
  lines.push(describeClient(client));
  if (engine.available) {
    lines.push(`image:      ${status.expected} ${status.present ? 'present' : 'missing: run `toolcell sandbox build`'}`);
    if (status.stale.length > 0) lines.push(`stale:      ${status.stale.join(', ')} (older recipes; \`docker rmi\` them)`);
    lines.push(
      `bases:      toolcell-base:bookworm ${status.bases.offline ? 'present' : 'missing'}, debian:bookworm-slim ${status.bases.registry ? 'present' : 'missing'}`,
    );
  }
  if (runtimes) lines.push(...describeRuntimes(runtimes));
  if (containers) lines.push(`containers: ${containers.live} in use, ${containers.leftovers} left over (\`toolcell sandbox clean\` removes them)`);
  lines.push(`ready:      ${engine.available && status.present && runtimes?.used.available !== false ? 'yes' : 'no'}`);
  return `${lines.join('\n')}\n`;
}

/** Builds toolcell's sandbox image with the build progress every image build of the CLI shows. */
async function buildWithProgress(command: string, build: BuildSandboxImageOptions, verbose: boolean): Promise<BuildSandboxImageResult | undefined> {
  const [{ buildWithProgress: withProgress }, { buildSandboxImage }] = await Promise.all([
    import('../build-with-progress.js'),
    import('../../backends/docker/build.js'),
  ]);
  return withProgress(`toolcell sandbox ${command}`, (onProgress, signal) => buildSandboxImage({ ...build, onProgress, signal }), verbose);
}

interface WorkspaceImageOptions {
  workspace?: string;
  trustWorkspace?: boolean;
  verbose?: boolean;
  socket?: string;
}

/** After `sandbox build`: the workspace's own image (.toolcell/sandbox.Dockerfile) when the workspace is trusted, with the same progress. */
async function buildWorkspaceImage(base: string, options: WorkspaceImageOptions): Promise<string | undefined> {
  const [{ loadSettings }, { workspaceSandboxDockerfile }, { resolve }] = await Promise.all([
    import('../../config/load-settings.js'),
    import('../../runtime/sandbox-dockerfile.js'),
    import('node:path'),
  ]);
  const root = resolve(options.workspace ?? '.');
  let dockerfile: string | undefined;
  try {
    const settings = loadSettings({ workspace: root, ...(options.trustWorkspace ? { trustWorkspace: true } : {}) });
    dockerfile = workspaceSandboxDockerfile(root, settings.workspaceTrusted, (line) => process.stderr.write(`toolcell sandbox build: ${line}\n`));
  } catch (error) {
    fail('build', error);
    return undefined;
  }
  if (dockerfile === undefined) return undefined;
  const { buildWithProgress: buildImage } = await import('../build-with-progress.js');
  const tag = await buildImage(
    'toolcell sandbox build',
    async (onProgress, signal) => {
      const { ensureCustomImage } = await import('../../backends/docker/custom-image.js');
      return ensureCustomImage({ base, dockerfile, build: true, onProgress, signal, ...(options.socket ? { socketPath: options.socket } : {}) });
    },
    options.verbose === true,
  );
  return tag;
}

function registerBuild(sandbox: Command): void {
  sandbox
    .command('build')
    .description(
      'Build the sandbox image (toolcell-sandbox:<recipe hash>) from sandbox/. Without options it uses debian:bookworm-slim ' +
        'when available, else builds a base from Debian packages (debootstrap; needs root and an apt mirror). ' +
        'Progress goes to stderr (a live line on a terminal, plain lines otherwise); the tag is printed on stdout.',
    )
    .option('--offline', 'build the base from Debian packages (debootstrap + docker import) instead of pulling it')
    .option('--base <image>', 'base image for the Dockerfile (default: debian:bookworm-slim or the offline base)')
    .option('--rebuild-base', 'with --offline: rebuild toolcell-base:bookworm even if it exists')
    .option('--verbose', 'print every line the build prints, not only its phases and steps')
    .option('--socket <path>', 'Docker engine socket (default: DOCKER_HOST or /var/run/docker.sock)')
    .option('--workspace <dir>', "also build this trusted workspace's .toolcell/sandbox.Dockerfile, FROM the image (default: the current folder)")
    .option('--trust-workspace', 'trust the workspace for this run, so that its sandbox Dockerfile is built')
    .exitOverride()
    .action(async (options: EngineCliOptions & WorkspaceImageOptions & { offline?: boolean; base?: string; rebuildBase?: boolean; verbose?: boolean }) => {
      if (options.offline && options.base) {
        process.stderr.write('toolcell sandbox build: --offline and --base exclude each other\n');
        process.exitCode = EXIT_USAGE;
        return;
      }
      const build: BuildSandboxImageOptions = engineOptions(options);
      if (options.offline) build.offline = true;
      if (options.base) build.base = options.base;
      if (options.rebuildBase) build.rebuildBase = true;
      const result = await buildWithProgress('build', build, options.verbose === true);
      if (!result) return;
      process.stdout.write(`${result.tag}\n`);
      process.exitCode = EXIT_OK;
      const custom = await buildWorkspaceImage(result.tag, options);
      if (custom) process.stdout.write(`${custom}\n`);
    });
}

function registerSetup(sandbox: Command): void {
  sandbox
    .command('setup')
    .description(
      "Make the sandbox ready on this machine: start the Docker engine, installing Debian's docker.io first when there is no dockerd " +
        '(needs root; nothing is installed when an engine already answers), then build the sandbox image when it is missing. ' +
        "With --runtime runsc, also gVisor: install Debian's runsc when missing, register it in the engine's daemon.json with the " +
        'network modes this kernel needs (runsc, runsc-egress), reload the engine with SIGHUP (never a restart) and check it ' +
        "(gVisor's boot messages in dmesg inside a container). Safe to run again.",
    )
    .option('--offline', "build the image's base from Debian packages instead of pulling it")
    .option('--verbose', 'print every line the build prints')
    .option('--runtime <name>', 'also set up this OCI runtime: runsc (gVisor)')
    .option('--socket <path>', 'Docker engine socket (default: DOCKER_HOST or /var/run/docker.sock)')
    .exitOverride()
    .action(async (options: EngineCliOptions & { offline?: boolean; verbose?: boolean; runtime?: string }) => {
      if (options.runtime !== undefined && options.runtime !== GVISOR_RUNTIME) {
        process.stderr.write(
          `toolcell sandbox setup: --runtime ${options.runtime}: only runsc (gVisor) can be set up here; register other runtimes in /etc/docker/daemon.json ("runtimes") and reload the engine\n`,
        );
        process.exitCode = EXIT_USAGE;
        return;
      }
      const engine = engineOptions(options);
      const [{ spawnSync }, { join }, { sandboxRecipeDir, imageExists, sandboxImageTag }] = await Promise.all([
        import('node:child_process'),
        import('node:path'),
        import('../../backends/docker/image.js'),
      ]);
      const env = { ...process.env, ...(engine.socketPath ? { DOCKER_HOST: `unix://${engine.socketPath}` } : {}) };
      // The script talks to a person: its stdout joins stderr, so stdout stays ours.
      const script = spawnSync('sh', [join(sandboxRecipeDir(), 'setup-engine.sh')], { env, stdio: ['inherit', process.stderr, process.stderr] });
      if (script.status !== 0) {
        process.stderr.write(
          `toolcell sandbox setup: the Docker engine is not ready (setup-engine.sh exited ${script.status ?? script.signal ?? script.error?.message})\n`,
        );
        process.exitCode = EXIT_FAILURE;
        return;
      }
      try {
        if (await imageExists(engine, sandboxImageTag())) {
          process.stderr.write(`setup: the sandbox image ${sandboxImageTag()} is present\n`);
        } else {
          const result = await buildWithProgress('setup', { ...engine, ...(options.offline ? { offline: true } : {}) }, options.verbose === true);
          if (!result) return;
        }
        if (options.runtime !== undefined) {
          const [{ setUpGvisor }, { createEngineClient }] = await Promise.all([
            import('../../backends/docker/setup-runtime.js'),
            import('../../backends/docker/engine.js'),
          ]);
          await setUpGvisor({ docker: createEngineClient(engine), image: sandboxImageTag(), say: (line) => process.stderr.write(`setup: ${line}\n`) });
        }
      } catch (error) {
        fail('setup', error);
        return;
      }
      process.exitCode = (await printStatus(engine, false)) ? EXIT_OK : EXIT_FAILURE;
    });
}

/** Prints `toolcell sandbox status` to stdout; true when ready. */
async function printStatus(engine: EngineOptions, json: boolean): Promise<boolean> {
  const [{ sandboxImageStatus }, { engineAddress }, { probeDockerCli }] = await Promise.all([
    import('../../backends/docker/image.js'),
    import('../../backends/docker/engine.js'),
    import('../../backends/docker/docker-cli.js'),
  ]);
  const [status, client] = await Promise.all([sandboxImageStatus(engine), probeDockerCli(engine)]);
  const containers = status.engine.available ? await countContainers(engine) : undefined;
  const runtimes = status.engine.available ? await runtimeStatus(engine) : undefined;
  const ready = status.engine.available && status.present && runtimes?.used.available !== false;
  if (json) {
    const report = {
      ready,
      engine: { address: engineAddress(engine), ...status.engine },
      client,
      image: { expected: status.expected, present: status.present, stale: status.stale },
      bases: status.bases,
      containers: containers ?? null,
      runtimes: runtimes?.runtimes ?? null,
      runtime: runtimes?.used ?? null,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    process.stdout.write(describeStatus(status, client, containers, engineAddress(engine), runtimes));
  }
  return ready;
}

function registerStatus(sandbox: Command): void {
  sandbox
    .command('status')
    .description(
      "Say whether the Docker engine answers (its version and API, and the docker client's, which may differ and negotiate down), " +
        'whether the sandbox image for this version is built or stale, which OCI runtimes the engine has and which one toolcell uses here ' +
        "(settings' sandbox.runtime, else the engine's default), and list leftover containers. Exit code 0 when ready, 1 when not.",
    )
    .option('--json', 'print the status as JSON')
    .option('--socket <path>', 'Docker engine socket (default: DOCKER_HOST or /var/run/docker.sock)')
    .exitOverride()
    .action(async (options: EngineCliOptions & { json?: boolean }) => {
      try {
        process.exitCode = (await printStatus(engineOptions(options), options.json === true)) ? EXIT_OK : EXIT_FAILURE;
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
        const [{ engineCall, createEngineClient }, { removeLeftoverContainers }] = await Promise.all([
          import('../../backends/docker/engine.js'),
          import('../../backends/docker/cleanup.js'),
        ]);
        const result = await engineCall(engine, () => removeLeftoverContainers(createEngineClient(engine), { all: options.all === true }));
        if (options.json) process.stdout.write(`${JSON.stringify(result)}\n`);
        else
          process.stdout.write(
            `removed ${result.removed.length} container(s)${result.removed.length ? `: ${result.removed.join(' ')}` : ''}; kept ${result.kept} in use\n`,
          );
        process.exitCode = EXIT_OK;
      } catch (error) {
        fail('clean', error);
      }
    });
}

/** Registers `toolcell sandbox setup|build|status|clean`. */
export function registerSandboxCommand(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description('Manage the Docker sandbox that shell commands run in: set it up, build its image, check its status, clean up containers.')
    .exitOverride();
  registerSetup(sandbox);
  registerBuild(sandbox);
  registerStatus(sandbox);
  registerClean(sandbox);
}
