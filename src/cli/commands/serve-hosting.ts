import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { errorMessage, isToolcellError } from '../../errors.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';
import { writePidFile, type PidFile } from '../pid-file.js';
import { runtimeOptionsFrom, type RunnerCliOptions } from '../options.js';
import type { TenantDisks } from '../../hosting/disk/tenant-disks.js';
import type { HostingServerOptions } from '../../hosting/hosting-server.js';
import { audienceProblem, parsePublicUrl, type PublicUrl } from '../../hosting/oidc/resource-identifiers.js';
import { escapeText } from '../../ui/escape-text.js';
import type { HostingOperationsFlagValues } from './hosting-operations.js';
import { isListenError, ListenerFailure } from './listener-failure.js';

/** The flags of `toolcell serve` that hosting mode reads. */
export interface HostingCliOptions extends RunnerCliOptions, HostingOperationsFlagValues {
  http: { host: string; port: number };
  tenants: string;
  dataDir?: string;
  drainSeconds: number;
  maxSessions?: number;
  maxConcurrentCalls: number;
  allowedHost?: string[];
  /** Where the server's pid goes once it listens (logrotate's postrotate sends SIGHUP to it). */
  pidFile?: string;
}

/** Where tenants' workspaces go without --data-dir. */
export function defaultDataDir(): string {
  return join(homedir(), '.toolcell', 'hosting');
}

/** Every line of the hosting server's stderr: escaped, since tenants, clients and the issuer put text in them. */
const say = (message: string) => process.stderr.write(`toolcell serve: ${escapeText(message)}\n`);

/**
 * `toolcell serve --http … --tenants FILE`: the hosting server until SIGINT
 * or SIGTERM, then a drain of --drain-seconds, then every container removed.
 */
export async function runHostingServe(options: HostingCliOptions): Promise<number> {
  if (options.sandbox === 'none') return usage('--tenants needs the Docker sandbox: tenants never run commands on the host (drop --sandbox none)');
  const dataDir = resolve(options.dataDir ?? defaultDataDir());
  if ((options.tlsCert === undefined) !== (options.tlsKey === undefined)) return usage('--tls-cert and --tls-key go together');
  if ((options.admin === undefined) !== (options.adminKeyFile === undefined))
    return usage(
      "--admin [HOST:]PORT and --admin-key-file FILE go together: the admin API has a listener of its own (loopback unless a host is given), never the tenants' port",
    );
  if (options.oidcIssuer === undefined && (options.audience !== undefined || options.tenantClaim !== undefined))
    return usage('--audience and --tenant-claim need --oidc-issuer URL');
  const checked = checkIdentityFlags(options);
  if (typeof checked === 'string') return usage(checked);
  const { publicUrl } = checked;
  const [
    { createRuntime },
    { TenantStore },
    { ApiKeyAuthenticator },
    { HostingServer },
    { TenantDisks },
    { folderWorkspace },
    { openHostingOperations, TlsPairFailure },
  ] = await Promise.all([
    import('../../runtime/runtime.js'),
    import('../../hosting/tenant-store.js'),
    import('../../hosting/api-key.js'),
    import('../../hosting/hosting-server.js'),
    import('../../hosting/disk/tenant-disks.js'),
    import('../../hosting/tenant-workspace.js'),
    import('./hosting-operations.js'),
  ]);
  let store;
  try {
    store = await TenantStore.open({ file: resolve(options.tenants), onLog: say, dataDir });
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    return isToolcellError(error) ? usage(errorMessage(error)) : failure(error);
  }
  let operations;
  try {
    const { publicUrl: _given, ...flags } = options;
    operations = await openHostingOperations({ ...flags, ...(publicUrl ? { publicUrl } : {}) }, store, say);
  } catch (error) {
    store.close();
    if (error instanceof TlsPairFailure) return failure(error);
    return isToolcellError(error) || error instanceof RangeError || error instanceof TypeError ? usage(errorMessage(error)) : failure(error);
  }
  // A hard cap on each tenant's workspace is a loop-mounted filesystem: it needs root. A tenant with a
  // `workspace` of its own keeps that folder, uncapped.
  const disks = process.getuid?.() === 0 ? await TenantDisks.open({ dataDir }) : undefined;
  if (!disks) say("not running as root: tenant workspaces are plain folders without a disk cap, and every tenant's commands run as this user");
  const folders = folderWorkspace({ dataDir, workspaceOf: (tenant) => store.tenant(tenant)?.workspace, onLog: say });
  const prepareWorkspace: HostingServerOptions['prepareWorkspace'] = async (tenant, limits, owner) =>
    disks && store.tenant(tenant)?.workspace === undefined ? disks.prepare(tenant, { diskBytes: limits.diskBytes }, owner) : folders(tenant, limits, owner);
  let runtime;
  try {
    // The runtime is the operator's (policy, approval mode, worker pool); its workspace is the data dir, never a tenant's.
    runtime = await createRuntime({ ...runtimeOptionsFrom({ ...options, workspace: dataDir, sandbox: 'docker' }), onWarning: say });
  } catch (error) {
    store.close();
    await operations.close();
    await releaseDisks(disks);
    return usage(errorMessage(error));
  }
  const stop = new AbortController();
  let pidFile: PidFile | undefined;
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let server: Awaited<ReturnType<typeof HostingServer.start>> | undefined;
  try {
    try {
      server = await HostingServer.start({
        store,
        runtime,
        authenticators: [new ApiKeyAuthenticator(store), ...operations.authenticators],
        observer: operations.observer,
        ...operations.serverOptions,
        prepareWorkspace,
        dataDir,
        host: options.http.host,
        port: options.http.port,
        ...(options.allowedHost ? { allowedHosts: options.allowedHost } : {}),
        ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
        maxConcurrentCalls: options.maxConcurrentCalls,
        onLog: say,
      });
    } catch (error) {
      if (isListenError(error)) return failure(new ListenerFailure('--http', `${options.http.host}:${options.http.port}`, error));
      return error instanceof RangeError || error instanceof TypeError ? usage(errorMessage(error)) : failure(error);
    }
    await operations.attach(server);
    try {
      pidFile = options.pidFile !== undefined ? await writePidFile(resolve(options.pidFile)) : undefined;
    } catch (error) {
      say(`--pid-file ${options.pidFile}: ${errorMessage(error)}`);
      await server.close({ drainMs: 0 });
      return EXIT_FAILURE;
    }
    say(
      `hosting ${store.tenants().length} tenant(s) over MCP Streamable HTTP at ${server.url} (tenants ${store.file}, data ${dataDir}, approval ${options.approval})`,
    );
    if (!stop.signal.aborted) await new Promise((done) => stop.signal.addEventListener('abort', done, { once: true }));
    say(`stopping: running calls have ${options.drainSeconds} s to finish`);
    const closing = server;
    server = undefined;
    await closing.close({ drainMs: options.drainSeconds * 1000 });
    return EXIT_OK;
  } catch (error) {
    return failure(error);
  } finally {
    // A start that failed after the server listened must not leave it serving.
    await server?.close().catch(() => {});
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await pidFile?.remove();
    store.close();
    await runtime.close();
    await operations.close();
    await releaseDisks(disks);
  }
}

/**
 * --oidc-issuer, --audience and --public-url checked before anything starts,
 * each error naming its flag; the parsed public URL, or the usage error.
 */
function checkIdentityFlags(options: HostingCliOptions): { publicUrl: PublicUrl | undefined } | string {
  let publicUrl: PublicUrl | undefined;
  try {
    if (options.publicUrl !== undefined) publicUrl = parsePublicUrl(options.publicUrl, '--public-url');
  } catch (error) {
    return errorMessage(error);
  }
  const issuer = options.oidcIssuer;
  if (issuer !== undefined && !(URL.canParse(issuer) && ['http:', 'https:'].includes(new URL(issuer).protocol))) {
    return `--oidc-issuer ${JSON.stringify(options.oidcIssuer)} is not an http(s) URL (the issuer exactly as its tokens' iss names it)`;
  }
  if (options.tenantClaim !== undefined && !/^\S+$/.test(options.tenantClaim))
    return `--tenant-claim ${JSON.stringify(options.tenantClaim)} must be a claim name`;
  const problem = options.audience !== undefined ? audienceProblem(options.audience) : undefined;
  if (problem !== undefined) return `--audience ${JSON.stringify(options.audience)} ${problem}`;
  if (options.oidcIssuer !== undefined && publicUrl === undefined) {
    return "--oidc-issuer needs --public-url URL: the address clients use (e.g. https://tools.example), published as URL/mcp in the OAuth metadata and 401s; the listen address is not it behind a proxy, and a request's Host header is the client's word";
  }
  return { publicUrl };
}

/** Unmounts every tenant workspace under the data dir: this server's, then any a crashed predecessor left (so the folder can be moved or removed). */
async function releaseDisks(disks: TenantDisks | undefined): Promise<void> {
  if (!disks) return;
  await disks.releaseAll();
  const left = await disks.releaseLeftovers();
  if (left.length > 0) say(`unmounted ${left.length} tenant workspace(s) a server that is gone had left mounted`);
}

function usage(message: string): number {
  say(message);
  return EXIT_USAGE;
}

function failure(error: unknown): number {
  say(errorMessage(error));
  return EXIT_FAILURE;
}
