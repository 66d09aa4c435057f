import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, constants, readFile, rename, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { GVISOR_RUNTIME } from '../../contracts/sandbox-runtime.js';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import { EGRESS_RUNTIME_SUFFIX, readEngineRuntimes } from './runtimes.js';

const run = promisify(execFile);

/**
 * `toolcell sandbox setup --runtime runsc`: gVisor, installed, registered
 * with the engine and checked, without ever restarting the engine (running
 * containers, other users' included, must survive it). Safe to run again:
 * when everything is in place it changes nothing.
 *
 * 1. Debian's `runsc` is installed with apt-get when no runsc is on PATH.
 * 2. The engine's daemon.json gets two runtimes (runtimes.ts): `runsc` with
 *    `--network=none` (sessions without network; Debian's runsc cannot use
 *    its own network stack on Linux 6.x, DESIGN.md fact 16), and
 *    `runsc-egress` for sessions on an egress network, with gVisor's own
 *    network stack where `runsc --network=sandbox do true` works, else
 *    `--network=host` (gVisor's Sentry then uses the host kernel's sockets,
 *    inside the container's network namespace). Other runtimes, the default
 *    runtime and every other setting are left as they are.
 * 3. The engine reloads daemon.json on SIGHUP (runtimes are among what it
 *    reloads); setup waits until it lists both.
 * 4. A container on `runsc` must print gVisor's boot messages in `dmesg`, and
 *    one on `runsc-egress` must start on an internal network.
 */

/** Where the engine's configuration file is, and the engine's process. */
export interface EngineHost {
  daemonJson: string;
  pid: number;
}

export interface SetUpGvisorOptions {
  docker: Docker;
  /** An image present in the engine, for the checks (the sandbox image). */
  image: string;
  /** One line per step, for a person (stderr). */
  say: (line: string) => void;
  /** Default: found from /var/run/docker.pid and the engine's command line. */
  host?: EngineHost;
}

/** Installs, registers and checks gVisor; throws a `sandbox_unavailable` error saying which step failed. */
export async function setUpGvisor(options: SetUpGvisorOptions): Promise<void> {
  const { docker, say } = options;
  if (process.getuid?.() !== 0) throw setupError("needs root (it installs a package and edits the engine's daemon.json): run it with sudo, or as root");
  const path = await ensureRunsc(say);
  const egressMode = await egressNetworkMode(path, say);
  const host = options.host ?? (await findEngineHost());
  const wanted: Record<string, RuntimeEntry> = {
    [GVISOR_RUNTIME]: { path, runtimeArgs: ['--network=none'] },
    [`${GVISOR_RUNTIME}${EGRESS_RUNTIME_SUFFIX}`]: { path, runtimeArgs: [`--network=${egressMode}`] },
  };
  const changed = await registerRuntimes(host.daemonJson, wanted);
  if (changed.length === 0) {
    say(`${host.daemonJson} already registers ${Object.keys(wanted).join(' and ')} as needed`);
  } else {
    say(`registered ${changed.join(' and ')} in ${host.daemonJson}; reloading the engine (SIGHUP to dockerd ${host.pid}, no restart)`);
    process.kill(host.pid, 'SIGHUP');
  }
  await waitForRuntimes(docker, wanted);
  await checkGvisor(docker, options.image, say);
}

interface RuntimeEntry {
  path: string;
  runtimeArgs: string[];
}

function setupError(message: string, cause?: unknown): ToolcellError {
  return new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, `gVisor set-up ${message}`, cause === undefined ? undefined : { cause });
}

/** The runsc executable: on PATH, or installed now from Debian's packages. */
async function ensureRunsc(say: (line: string) => void): Promise<string> {
  const found = await which('runsc');
  if (found !== undefined) {
    say(`runsc is installed: ${found} (${await runscVersion(found)})`);
    return found;
  }
  if ((await which('apt-get')) === undefined)
    throw setupError('found no runsc and no apt-get to install it: install gVisor (https://gvisor.dev/docs/user_guide/install/) and run this again');
  say("no runsc on this machine: installing Debian's runsc package (apt-get)");
  const install = (): Promise<unknown> =>
    run('apt-get', ['install', '-y', '-q', 'runsc'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 600_000, maxBuffer: 16 << 20 });
  try {
    await install();
  } catch {
    // A machine whose package lists are stale or missing: once more after an update.
    await run('apt-get', ['update', '-q'], { timeout: 600_000, maxBuffer: 16 << 20 }).catch(() => undefined);
    try {
      await install();
    } catch (error) {
      throw setupError(`could not install runsc with apt-get: ${tail((error as { stderr?: string }).stderr ?? String(error))}`, error);
    }
  }
  const installed = await which('runsc');
  if (installed === undefined) throw setupError('installed the runsc package, yet no runsc is on PATH');
  say(`installed ${installed} (${await runscVersion(installed)})`);
  return installed;
}

async function which(name: string): Promise<string | undefined> {
  for (const dir of (process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(delimiter)) {
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

async function runscVersion(path: string): Promise<string> {
  try {
    return (await run(path, ['--version'], { timeout: 15_000 })).stdout.split('\n')[0]?.trim() ?? 'version unknown';
  } catch {
    return 'version unknown';
  }
}

/**
 * `sandbox` when gVisor's own network stack starts on this kernel, else
 * `host`. Debian's runsc (2022) takes a network namespace for the host's
 * when /proc/sys/net/core/rmem_default exists in it, which Linux 6.x shows
 * in every namespace, and refuses to start.
 */
async function egressNetworkMode(path: string, say: (line: string) => void): Promise<'sandbox' | 'host'> {
  try {
    await run(path, ['--network=sandbox', 'do', 'true'], { timeout: 60_000 });
    say("gVisor's own network stack starts here: sessions with egress use it (--network=sandbox)");
    return 'sandbox';
  } catch (error) {
    const reason = tail((error as { stderr?: string }).stderr ?? String(error));
    say(
      `gVisor's own network stack does not start here (${reason}): sessions with egress use the host's sockets inside their network namespace (--network=host)`,
    );
    return 'host';
  }
}

/** The engine's pid (its pid file, else the one dockerd) and its daemon.json (its --config-file, else /etc/docker/daemon.json). */
export async function findEngineHost(): Promise<EngineHost> {
  let pid = Number((await readFile('/var/run/docker.pid', 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0 || !(await isDockerd(pid))) {
    const candidates = (await run('pidof', ['dockerd']).catch(() => ({ stdout: '' }))).stdout.trim().split(/\s+/).filter(Boolean).map(Number);
    if (candidates.length !== 1)
      throw setupError(
        `cannot tell which dockerd to reload (${candidates.length} running and no /var/run/docker.pid): reload yours with SIGHUP after registering runsc`,
      );
    pid = candidates[0]!;
  }
  const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
  const flag = argv.findIndex((arg) => arg === '--config-file' || arg.startsWith('--config-file='));
  const daemonJson = flag < 0 ? '/etc/docker/daemon.json' : argv[flag]!.includes('=') ? argv[flag]!.split('=')[1]! : argv[flag + 1]!;
  return { daemonJson, pid };
}

async function isDockerd(pid: number): Promise<boolean> {
  return (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim() === 'dockerd';
}

/** Writes `wanted` into daemon.json's `runtimes` (atomically), leaving everything else; returns the names it changed. */
export async function registerRuntimes(daemonJson: string, wanted: Record<string, RuntimeEntry>): Promise<string[]> {
  let text: string | undefined;
  try {
    text = await readFile(daemonJson, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw setupError(`cannot read ${daemonJson}: ${(error as Error).message}`, error);
  }
  let config: Record<string, unknown>;
  try {
    config = text === undefined || text.trim() === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch (error) {
    throw setupError(`found ${daemonJson} is not valid JSON (${(error as Error).message}); fix it first, the engine would refuse it too`, error);
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw setupError(`found ${daemonJson} does not hold a JSON object`);
  const runtimes = { ...((config['runtimes'] as Record<string, RuntimeEntry> | undefined) ?? {}) };
  const changed = Object.entries(wanted)
    .filter(([name, entry]) => JSON.stringify(runtimes[name]) !== JSON.stringify(entry))
    .map(([name]) => name);
  if (changed.length === 0) return [];
  for (const name of changed) runtimes[name] = wanted[name]!;
  const temporary = `${daemonJson}.toolcell-${randomBytes(4).toString('hex')}`;
  await writeFile(temporary, `${JSON.stringify({ ...config, runtimes }, null, 2)}\n`, { mode: 0o644 });
  await rename(temporary, daemonJson);
  return changed;
}

async function waitForRuntimes(docker: Docker, wanted: Record<string, RuntimeEntry>): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { runtimes } = await readEngineRuntimes(docker);
    const missing = Object.entries(wanted).filter(([name, entry]) => JSON.stringify(runtimes.get(name)?.args ?? null) !== JSON.stringify(entry.runtimeArgs));
    if (missing.length === 0) return;
    if (Date.now() > deadline)
      throw setupError(
        `reloaded the engine, but it does not list ${missing.map(([name]) => name).join(' and ')} as written (see the engine's log: a daemon.json it refuses keeps the old settings)`,
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Runs `command` in a container on `runtime`; returns its output. */
async function runChecked(docker: Docker, input: { image: string; runtime: string; network: string; command: string[] }): Promise<string> {
  const container = await docker.createContainer({
    Image: input.image,
    Cmd: input.command,
    User: '65534:65534',
    // A terminal: the logs come back as plain text, not in the engine's multiplexed frames.
    Tty: true,
    HostConfig: { Runtime: input.runtime, NetworkMode: input.network, CapDrop: ['ALL'], SecurityOpt: ['no-new-privileges'], ReadonlyRootfs: true },
    Labels: { 'dev.toolcell.setup-check': '1' },
  });
  try {
    await container.start();
    const status = (await container.wait()) as { StatusCode: number };
    const logs = (await container.logs({ stdout: true, stderr: true })).toString('utf8');
    if (status.StatusCode !== 0) throw new Error(`exit ${status.StatusCode}: ${tail(logs)}`);
    return logs;
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}

/** gVisor's boot messages in `dmesg` on `runsc`; a container on `runsc-egress` starts on an internal network. */
async function checkGvisor(docker: Docker, image: string, say: (line: string) => void): Promise<void> {
  let dmesg: string;
  try {
    dmesg = await runChecked(docker, { image, runtime: GVISOR_RUNTIME, network: 'none', command: ['dmesg'] });
  } catch (error) {
    throw setupError(`registered runsc, but a container on it failed: ${(error as Error).message}`, error);
  }
  if (!/Starting gVisor/.test(dmesg)) throw setupError(`registered runsc, but dmesg in a container on it is not gVisor's: ${tail(dmesg)}`);
  say(`checked: a container on runsc prints "${/Starting gVisor[^\r\n]*/.exec(dmesg)![0]}" in dmesg`);
  const egress = `${GVISOR_RUNTIME}${EGRESS_RUNTIME_SUFFIX}`;
  const network = await docker.createNetwork({
    Name: `toolcell-setup-check-${randomBytes(4).toString('hex')}`,
    Internal: true,
    Labels: { 'dev.toolcell.setup-check': '1' },
  });
  try {
    await runChecked(docker, { image, runtime: egress, network: (await network.inspect()).Name as string, command: ['cat', '/proc/version'] });
  } catch (error) {
    throw setupError(`registered ${egress}, but a container on it failed on an internal network: ${(error as Error).message}`, error);
  } finally {
    await network.remove().catch(() => undefined);
  }
  say(`checked: a container on ${egress} starts on an internal network (egress through toolcell's proxy)`);
}

/** The last meaningful line of a tool's output, for one-line messages. */
function tail(text: string): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return (lines.at(-1) ?? text.trim()).slice(0, 300);
}
