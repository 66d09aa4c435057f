import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { errorMessage, isToolcellError } from '../../errors.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';
import { runtimeOptionsFrom, type RunnerCliOptions } from '../options.js';
import type { HostingServerOptions } from '../../hosting/hosting-server.js';
import type { HostingOperationsFlagValues } from './hosting-operations.js';

/** The flags of `toolcell serve` that hosting mode reads. */
export interface HostingCliOptions extends RunnerCliOptions, HostingOperationsFlagValues {
  http: { host: string; port: number };
  tenants: string;
  dataDir?: string;
  drainSeconds: number;
  maxSessions?: number;
  maxConcurrentCalls: number;
  allowedHost?: string[];
}

/** Where tenants' workspaces go without --data-dir. */
export function defaultDataDir(): string {
  return join(homedir(), '.toolcell', 'hosting');
}

const say = (message: string) => process.stderr.write(`toolcell serve: ${message}\n`);

/**
 * `toolcell serve --http … --tenants FILE`: the hosting server until SIGINT
 * or SIGTERM, then a drain of --drain-seconds, then every container removed.
 */
export async function runHostingServe(options: HostingCliOptions): Promise<number> {
  if (options.sandbox === 'none') return usage('--tenants needs the Docker sandbox: tenants never run commands on the host (drop --sandbox none)');
  const dataDir = resolve(options.dataDir ?? defaultDataDir());
  if ((options.tlsCert === undefined) !== (options.tlsKey === undefined)) return usage('--tls-cert and --tls-key go together');
  if (options.oidcIssuer === undefined && (options.audience !== undefined || options.tenantClaim !== undefined))
    return usage('--audience and --tenant-claim need --oidc-issuer URL');
  const [{ createRuntime }, { TenantStore }, { ApiKeyAuthenticator }, { HostingServer }, { TenantDisks }, { folderWorkspace }, { openHostingOperations }] =
    await Promise.all([
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
    store = await TenantStore.open({ file: resolve(options.tenants), onLog: say });
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    return isToolcellError(error) ? usage(errorMessage(error)) : failure(error);
  }
  let operations;
  try {
    const scheme = options.tlsCert !== undefined ? 'https' : 'http';
    operations = await openHostingOperations({ ...options, publicUrl: `${scheme}://${options.http.host}:${options.http.port}` }, store, say);
  } catch (error) {
    store.close();
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
    await disks?.releaseAll();
    return usage(errorMessage(error));
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    let server;
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
      return error instanceof RangeError || error instanceof TypeError ? usage(errorMessage(error)) : failure(error);
    }
    await operations.attach(server);
    say(
      `hosting ${store.tenants().length} tenant(s) over MCP Streamable HTTP at ${server.url} (tenants ${store.file}, data ${dataDir}, approval ${options.approval})`,
    );
    if (!stop.signal.aborted) await new Promise((done) => stop.signal.addEventListener('abort', done, { once: true }));
    say(`stopping: running calls have ${options.drainSeconds} s to finish`);
    await server.close({ drainMs: options.drainSeconds * 1000 });
    return EXIT_OK;
  } catch (error) {
    return failure(error);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    store.close();
    await runtime.close();
    await operations.close();
    await disks?.releaseAll();
  }
}

function usage(message: string): number {
  say(message);
  return EXIT_USAGE;
}

function failure(error: unknown): number {
  say(errorMessage(error));
  return EXIT_FAILURE;
}
