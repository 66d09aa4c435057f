import { InvalidArgumentError, Option, type Command } from 'commander';
import { isToolcellError } from '../../errors.js';
import { formatCpuList, parseCpuList } from '../../contracts/cpu-list.js';
import { isAcceptableToken, isLoopbackHost, TOKEN_RULE } from '../../mcp/server/http-guard.js';
import type { ShellService } from '../../shell/shell-service.js';
import type { ToolServerOptions } from '../../mcp/server/create-tool-server.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';
import { type RunnerCliOptions, runtimeOptionsFrom, addRuntimeOptions } from '../options.js';
import type { Runtime } from '../../runtime/runtime.js';
import { shellServiceOptions } from '../../runtime/shell-settings.js';
import { escapeText } from '../../ui/escape-text.js';
import { isListenError, ListenerFailure, type HostingOperationsFlagValues } from '../../hosting/index.js';
import { addEtcdOptions, type EtcdCliOptions } from './cluster-options.js';
import { keepServerOffCpus } from '../server-cpus.js';

interface ServeOptions extends RunnerCliOptions, HostingOperationsFlagValues, EtcdCliOptions {
  nodeName?: string;
  nodeUrl?: string;
  stdio?: boolean;
  http?: { host: string; port: number };
  token?: string;
  allowedHost?: string[];
  maxSessions?: number;
  tenants?: string;
  dataDir?: string;
  drainSeconds: number;
  maxConcurrentCalls: number;
  pidFile?: string;
  engineNice?: number;
}

/** The hosting-only flags: each needs --tenants. */
const HOSTING_FLAGS = [
  ['audit', '--audit'],
  ['metrics', '--metrics'],
  ['admin', '--admin'],
  ['adminKeyFile', '--admin-key-file'],
  ['oidcIssuer', '--oidc-issuer'],
  ['audience', '--audience'],
  ['tenantClaim', '--tenant-claim'],
  ['tlsCert', '--tls-cert'],
  ['tlsKey', '--tls-key'],
  ['publicUrl', '--public-url'],
  ['pidFile', '--pid-file'],
  ['engineNice', '--engine-nice'],
  ['etcd', '--etcd'],
  ['nodeUrl', '--node-url'],
] as const;

/** Registers `toolcell serve`: the registry's tools as an MCP server over stdio or Streamable HTTP. */
export function registerServeCommand(program: Command): void {
  addRuntimeOptions(
    addEtcdOptions(
      program
        .command('serve')
        .description("Serve the workspace's tools (built-in, discovered, MCP) as an MCP server; shell commands run in a sandbox per MCP session.")
        .option('--stdio', 'serve one session over stdin/stdout')
        .option('--http <[host:]port>', 'serve Streamable HTTP at http://host:port/mcp (host default 127.0.0.1)', parseHostPort)
        .option('--token <token>', 'bearer token clients must send (required off loopback; default $TOOLCELL_SERVE_TOKEN)')
        .option('--allowed-host <host:port...>', 'extra Host header values to accept (e.g. a DNS name for this server)')
        .option(
          '--max-sessions <n>',
          'most concurrent MCP sessions over HTTP (each holds a sandbox); with --tenants, all tenants together',
          parsePositiveInteger,
          16,
        )
        .option(
          '--sandbox-cpus <list>',
          "the CPUs every sandbox container runs on, e.g. 1 or 2-7 (Linux's list form); the server moves itself onto the others it may use",
          parseCpuListFlag,
        )
        .option('--tenants <file>', 'hosting mode: many tenants, each with its API keys, workspace and limits (see toolcell tenant add)')
        .option(
          '--data-dir <dir>',
          "with --tenants: where tenants' workspaces are kept (run as root: <dir>/workspaces/<name>-<hash>, each a capped filesystem; otherwise <dir>/tenants/<name>/workspace; default ~/.toolcell/hosting)",
        )
        .option(
          '--max-concurrent-calls <n>',
          'with --tenants: most tool calls running at once, all tenants together (waiting tenants take turns)',
          parsePositiveInteger,
          16,
        )
        .option(
          '--drain-seconds <n>',
          'with --tenants: on SIGTERM or SIGINT, how long running calls may finish before they are cancelled',
          parseNonNegativeInteger,
          10,
        )
        .option(
          '--audit <file>',
          'with --tenants: append one JSON line (at most 16 KiB) per call, session and admin action, and per minute a count of each repeated refusal; reopened on SIGHUP',
        )
        .option('--metrics <[host:]port>', 'with --tenants: serve /metrics (Prometheus), /healthz and /readyz for operators (host default 127.0.0.1)')
        .option(
          '--admin <[host:]port>',
          "with --tenants and --admin-key-file: serve the admin API (/admin/) on its own listener, never on the tenants' port (host default 127.0.0.1)",
        )
        .option('--admin-key-file <file>', 'with --admin: the admin key (a file of mode 0600) for /admin/ and toolcell hosting sessions|close')
        .option('--oidc-issuer <url>', 'with --tenants: also accept JWT access tokens of this OpenID issuer (checked against its JWKS)')
        .option(
          '--public-url <url>',
          "with --tenants: the address clients use, e.g. https://tools.example (behind a proxy, the proxy's); needed with --oidc-issuer; --tls-cert must name its host",
        )
        .option(
          '--audience <aud>',
          "with --oidc-issuer: what tokens' aud must hold: any string, e.g. toolcell or urn:example:toolcell (a URI if it has a colon; default --public-url/mcp)",
        )
        .option('--tenant-claim <name>', 'with --oidc-issuer: the token claim that names the tenant (default sub)')
        .option('--tls-cert <file>', 'with --tenants: serve HTTPS with this PEM certificate (with --tls-key); reloaded on SIGHUP if valid now')
        .option('--tls-key <file>', 'with --tenants: the PEM private key of --tls-cert')
        .option(
          '--engine-nice <n>',
          "with --tenants: the local Docker engine's nice, 0-19 (default 10): container starts for new sessions wait for the CPU behind running calls; 0 leaves the engine as it is",
          parseNice,
        )
        .option('--pid-file <file>', "with --tenants: write the server's pid here once it listens, removed when it stops (for kill -HUP after log rotation)")
        .addOption(
          new Option(
            '--node-name <name>',
            "with --etcd: this node's name (in every session id it mints, so the front keeps a session on its node, and in every audit line)",
          ).env('TOOLCELL_NODE'),
        )
        .addOption(new Option('--node-url <url>', 'with --etcd: where the other nodes reach this server (https://ADDRESS:PORT)').env('TOOLCELL_NODE_URL')),
      'with --tenants, one node of a cluster (deploy/swarm/): the tenants come from etcd (written to the --tenants file)',
    ),
  )
    .addHelpText(
      'after',
      `
Nobody can be asked to confirm a call, so the approval mode decides: a call
that would need confirmation is refused with an error (type
confirmation_required). Use --approval autoEdit to allow file edits, yolo to
allow everything (shell commands still run in the sandbox). Policy rules
(--policy FILE, ~/.toolcell/policies/*.toml) allow or deny calls in any mode.

Live output is sent as MCP progress notifications when the client asks for
progress; MCP cancellation stops the call, down to its process.

Hosting mode (--tenants FILE): every request needs a tenant's API key
(Authorization: Bearer tc_…, made by toolcell tenant add); each tenant has its
own workspace under --data-dir, its own containers and its limits. Changes
to the tenants file apply within about a second. --workspace, --token and
--stdio do not apply; commands always run in the Docker sandbox. Run as
root, each tenant's workspace is a filesystem of its own capped at its
diskBytes limit, the server's event loop runs at nice -5 (unless started
at another nice) and the local Docker engine at nice 10 (--engine-nice), so
that starting tenants' containers waits behind running calls for the CPU;
--sandbox-cpus gives the server CPUs of its own. /healthz
and /readyz answer on the same port (/readyz is 503 from SIGTERM on, while
running calls drain). The admin API answers only on
its own --admin listener, and metrics only on --metrics. A request body
over 4 MiB gets 413; past 16 MiB of bodies held for one tenant, or 64 MiB in
all, 503 with Retry-After; one not sent whole within 30 s, 408. A tenant
lists its own sessions with GET /sessions and closes one with
DELETE /sessions/<id> (its own key); a session whose client left without
ending it (no request, no open event stream) closes after its
abandonedSeconds limit (default 120). A listener that cannot open
(--http, --metrics, --admin, --tls-cert/--tls-key) stops the start (exit 1).

OIDC (--oidc-issuer URL --public-url URL [--audience AUD]): tenants may also
send JWT access tokens of that issuer. --public-url is the address clients
use (behind a proxy, the proxy's): <url>/mcp is published as the resource in
/.well-known/oauth-protected-resource and pointed at by every 401. --audience
is what tokens' aud must hold (default <url>/mcp). A session stays with the
credential that opened it: another key, or a token of the same tenant, gets
the 404 of an unknown session.

TLS (--tls-cert FILE --tls-key FILE): SIGHUP reads both again; a pair that
does not match, is not valid now, or (with --public-url) does not name its
host is logged and the old one keeps serving. At start, such a pair stops it.

Examples:
  toolcell serve --stdio --workspace ~/project
  toolcell serve --http 8080 --approval yolo
  TOOLCELL_SERVE_TOKEN=s3cret toolcell serve --http 0.0.0.0:8080
  toolcell serve --http 0.0.0.0:8080 --tenants /srv/toolcell/tenants.json --data-dir /srv/toolcell --approval yolo
  toolcell serve --http 127.0.0.1:8080 --tenants tenants.json --metrics 9464 --admin 9465 --admin-key-file admin.key
  toolcell serve --http 127.0.0.1:8080 --tenants tenants.json --public-url https://tools.example --allowed-host tools.example:443 \
    --oidc-issuer https://id.example --audience toolcell`,
    )
    .action(async (options: ServeOptions) => {
      process.exitCode = await runServe(options);
    });
}

async function runServe(options: ServeOptions): Promise<number> {
  if (Boolean(options.stdio) === Boolean(options.http)) return usageError('give exactly one of --stdio or --http [host:]port');
  if (options.tenants !== undefined) {
    if (!options.http) return usageError('--tenants needs --http [host:]port');
    if (options.token !== undefined) return usageError('--tenants and --token exclude each other: tenants sign in with their own API keys');
    const { runHostingServe } = await import('./serve-hosting.js');
    return runHostingServe({ ...options, http: options.http, tenants: options.tenants });
  }
  if (options.dataDir !== undefined) return usageError('--data-dir needs --tenants FILE');
  for (const [key, flag] of HOSTING_FLAGS) if (options[key] !== undefined) return usageError(`${flag} needs --tenants FILE`);
  const token = options.token ?? (process.env['TOOLCELL_SERVE_TOKEN'] || undefined);
  if (token !== undefined && !isAcceptableToken(token)) return usageError(`--token ${TOKEN_RULE}`);
  if (options.http && !isLoopbackHost(options.http.host) && token === undefined) {
    return usageError(`serving on ${options.http.host} (not a loopback address) requires a bearer token (--token or $TOOLCELL_SERVE_TOKEN)`);
  }
  if (options.sandboxCpus !== undefined) {
    if (options.sandbox === 'none') return usageError('--sandbox-cpus needs the Docker sandbox: with --sandbox none commands run as the server does');
    const split = await keepServerOffCpus(options.sandboxCpus);
    if ('problem' in split) return split.usage ? usageError(split.problem) : failure(split.problem);
    process.stderr.write(`toolcell serve: ${split.summary}\n`);
  }

  // Loaded on use, so `--help` and `--version` start fast.
  const [{ createRuntime }, { ShellService }, { serveHttp }, { serveStdio }, { createSessionFactory }, { shellSessionSandbox }] = await Promise.all([
    import('../../runtime/runtime.js'),
    import('../../shell/shell-service.js'),
    import('../../mcp/server/serve-http.js'),
    import('../../mcp/server/serve-stdio.js'),
    import('../../runtime/mcp-session-factory.js'),
    import('../../runtime/mcp-session-sandbox.js'),
  ]);
  let runtime: Runtime;
  try {
    // `--sandbox` wins over settings' sandbox.mode, which can never be `none` (resolveSandboxMode).
    runtime = await createRuntime({
      ...runtimeOptionsFrom(options),
      onWarning: (message) => process.stderr.write(`toolcell serve: ${message}\n`),
    });
  } catch (error) {
    return usageError(error);
  }

  // Each MCP session has a registry of its own (its shell tool runs in its own sandbox); the rest is the runtime's.
  const createScheduler: ToolServerOptions['createScheduler'] = ({ registry, onOutput }) => runtime.createScheduler({ registry, onOutput });
  // Each MCP session gets a shell session of its own (its own container with docker). Over HTTP a
  // spare container waits for the next client's session; over stdio there is only the one session.
  let shell: ShellService;
  try {
    shell = await ShellService.create(
      shellServiceOptions(runtime.settings, { dockerfile: runtime.sandboxDockerfile, cpuSet: runtime.sandboxCpus, ...(options.stdio ? { warmPool: 0 } : {}) }),
    );
  } catch (error) {
    await runtime.close();
    return failure(error);
  }
  runtime.onClose(() => shell.close());
  const createSession = createSessionFactory({
    baseRegistry: runtime.registry,
    openSandbox: shellSessionSandbox({
      service: shell,
      sandbox: runtime.sandbox,
      workspace: runtime.workspace,
      baseRegistry: runtime.registry,
      secrets: () => runtime.sandboxSecrets,
      ...(runtime.settings.shell.inactivityTimeoutMs !== undefined ? { inactivityTimeoutMs: runtime.settings.shell.inactivityTimeoutMs } : {}),
      ...(options.timeout ? { wallTimeoutMs: options.timeout * 1000 } : {}),
    }),
  });

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (options.stdio) {
      await serveStdio({ createSession, createScheduler, signal: stop.signal });
      return EXIT_OK;
    }
    const http = options.http!;
    let running;
    try {
      running = await serveHttp({
        createSession,
        createScheduler,
        host: http.host,
        port: http.port,
        ...(token !== undefined ? { token } : {}),
        ...(options.allowedHost ? { allowedHosts: options.allowedHost } : {}),
        ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
        // Client-caused problems reach these lines: escaped, as in hosting mode.
        onLog: (message) => process.stderr.write(`toolcell serve: ${escapeText(message)}\n`),
      });
    } catch (error) {
      if (isListenError(error)) return failure(new ListenerFailure('--http', `${http.host}:${http.port}`, error));
      return isToolcellError(error) || error instanceof RangeError || error instanceof TypeError ? usageError(error) : failure(error);
    }
    process.stderr.write(
      `toolcell serve: MCP over Streamable HTTP at ${running.url} (workspace ${runtime.workspace.roots[0]}, approval ${options.approval})\n`,
    );
    if (!stop.signal.aborted) await new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }));
    await running.close();
    return EXIT_OK;
  } catch (error) {
    return failure(error);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await runtime.close();
  }
}

/** `1`, `2-7`, `0,2-3`: written back canonical. */
function parseCpuListFlag(value: string): string {
  const cpus = parseCpuList(value);
  if (typeof cpus === 'string') throw new InvalidArgumentError(cpus);
  return formatCpuList(cpus);
}

/** `8080`, `0.0.0.0:8080`, `[::1]:8080`, `localhost:0`. */
function parseHostPort(value: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]:|([^:]+):)?(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) throw new InvalidArgumentError('expected [host:]port, e.g. 8080, 127.0.0.1:8080 or [::1]:8080');
  return { host: match[1] ?? match[2] ?? '127.0.0.1', port };
}

function parseNonNegativeInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number of seconds, 0 or more');
  return n;
}

function parseNice(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 19) throw new InvalidArgumentError('must be a whole number from 0 to 19');
  return n;
}

function parsePositiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function usageError(error: unknown): number {
  process.stderr.write(`toolcell serve: ${typeof error === 'string' ? error : error instanceof Error ? error.message : String(error)}\n`);
  return EXIT_USAGE;
}

function failure(error: unknown): number {
  process.stderr.write(`toolcell serve: ${error instanceof Error ? error.message : String(error)}\n`);
  return EXIT_FAILURE;
}
