import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { errorMessage, isToolcellError, ToolErrorType, type ErrorCode } from '../../errors.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';
import { writePidFile, type PidFile } from '../pid-file.js';
import { runtimeOptionsFrom, type RunnerCliOptions } from '../options.js';
import {
  audienceProblem,
  createHostingServer,
  isListenError,
  ListenerFailure,
  parsePublicUrl,
  TlsPairFailure,
  type HostedTenants,
  type HostingOperationsFlagValues,
  type PublicUrl,
} from '../../hosting/index.js';
import { escapeText } from '../../ui/escape-text.js';
import { VERSION } from '../../version.js';
import type { EtcdCliOptions } from './cluster-options.js';
import { joinClusterFromFlags } from './cluster-node.js';
import { keepServerOffCpus } from '../server-cpus.js';
import { raiseEventLoopPriority } from '../server-priority.js';
import { HOSTING_ENGINE_NICE, lowerLocalEngine } from '../engine-priority.js';

/** The flags of `toolcell serve` that hosting mode reads. */
export interface HostingCliOptions extends RunnerCliOptions, HostingOperationsFlagValues, EtcdCliOptions {
  /** With --etcd: one node of a cluster (cluster-node.ts). */
  nodeName?: string;
  nodeUrl?: string;
  http: { host: string; port: number };
  tenants: string;
  dataDir?: string;
  drainSeconds: number;
  maxSessions?: number;
  maxConcurrentCalls: number;
  allowedHost?: string[];
  /** Where the server's pid goes once it listens (logrotate's postrotate sends SIGHUP to it). */
  pidFile?: string;
  /** The local engine's nice (engine-priority.ts; default HOSTING_ENGINE_NICE, 0 leaves it). */
  engineNice?: number;
}

/** Where tenants' workspaces go without --data-dir. */
export function defaultDataDir(): string {
  return join(homedir(), '.toolcell', 'hosting');
}

const MACHINE_FAILURES = new Set<ErrorCode>([ToolErrorType.SANDBOX_UNAVAILABLE, ToolErrorType.SANDBOX_IMAGE_MISSING, ToolErrorType.DISK_CAP_FAILED]);

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
  if (options.sandboxCpus !== undefined) {
    // Before any thread of the runtime starts; they inherit the CPUs left to the server.
    const split = await keepServerOffCpus(options.sandboxCpus);
    if ('problem' in split) return split.usage ? usage(split.problem) : failure(split.problem);
    say(split.summary);
  }
  // Before the runtime starts its threads: the shell thread inherits the event loop's priority.
  const priority = raiseEventLoopPriority();
  if ('problem' in priority) say(priority.problem);
  else if (!priority.changed) say(`the event loop keeps nice ${priority.nice}, as started`);
  const cluster = await joinClusterFromFlags(options, say);
  if (typeof cluster === 'number') return cluster;
  const stop = new AbortController();
  let pidFile: PidFile | undefined;
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let hosted: HostedTenants | undefined;
  try {
    try {
      hosted = await createHostingServer({
        tenants: options.tenants,
        dataDir,
        http: options.http,
        runtime: runtimeOptionsFrom({ ...options, workspace: dataDir }),
        operations: {
          ...pickDefined(options, ['audit', 'metrics', 'admin', 'adminKeyFile', 'oidcIssuer', 'audience', 'tenantClaim', 'tlsCert', 'tlsKey', 'publicUrl']),
        },
        server: {
          ...(options.allowedHost ? { allowedHosts: options.allowedHost } : {}),
          ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
          maxConcurrentCalls: options.maxConcurrentCalls,
        },
        ...(cluster
          ? {
              node: { name: cluster.node, intercept: cluster.membership.intercept, admits: cluster.membership.admits, readiness: cluster.membership.readiness },
            }
          : {}),
        onLog: say,
      });
      const served = hosted;
      await cluster?.membership.serve(served.store, () => served.server.listSessions().length, VERSION, {
        server: served.server,
        dataDir,
        authenticators: served.authenticators,
      });
    } catch (error) {
      if (isListenError(error)) return failure(new ListenerFailure('--http', `${options.http.host}:${options.http.port}`, error));
      if (error instanceof TlsPairFailure || error instanceof ListenerFailure) return failure(error);
      // What the machine lacks (an engine, an image, a disk cap) is no mistake in the command line.
      if (isToolcellError(error) && MACHINE_FAILURES.has(error.code)) return failure(error);
      return isToolcellError(error) || error instanceof RangeError || error instanceof TypeError ? usage(errorMessage(error)) : failure(error);
    }
    try {
      pidFile = options.pidFile !== undefined ? await writePidFile(resolve(options.pidFile)) : undefined;
    } catch (error) {
      say(`--pid-file ${options.pidFile}: ${errorMessage(error)}`);
      await hosted.server.close({ drainMs: 0 });
      return EXIT_FAILURE;
    }
    // Once serving: a start that fails leaves the host as it was.
    const engineNice = options.engineNice ?? HOSTING_ENGINE_NICE;
    if (engineNice > 0) {
      const engine = await lowerLocalEngine(engineNice);
      say('problem' in engine ? engine.problem : engine.summary);
    }
    say(
      `hosting ${hosted.store.tenants().length} tenant(s) over MCP Streamable HTTP at ${hosted.url} (tenants ${hosted.store.file}, data ${dataDir}, approval ${options.approval})`,
    );
    if (!stop.signal.aborted) await new Promise((done) => stop.signal.addEventListener('abort', done, { once: true }));
    say(`stopping: running calls have ${options.drainSeconds} s to finish`);
    // In a cluster, first stop being chosen: no tenant is placed here and no session forwarded here while this node drains.
    await cluster?.membership.leave();
    const closing = hosted;
    hosted = undefined;
    await closing.close({ drainMs: options.drainSeconds * 1000 });
    return EXIT_OK;
  } catch (error) {
    return failure(error);
  } finally {
    // A start that failed after the server listened must not leave it serving.
    await hosted?.close().catch(() => {});
    await cluster?.membership.close().catch(() => {});
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await pidFile?.remove();
  }
}

/** The flags among `names` that were given. */
function pickDefined<T extends object, K extends keyof T>(values: T, names: K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(names.filter((name) => values[name] !== undefined).map((name) => [name, values[name]])) as Partial<Pick<T, K>>;
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

function usage(message: string): number {
  say(message);
  return EXIT_USAGE;
}

function failure(error: unknown): number {
  say(errorMessage(error));
  return EXIT_FAILURE;
}
