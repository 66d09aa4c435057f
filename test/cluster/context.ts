/**
 * What the cluster checks share: the formed cluster, the images loaded
 * into it, where the TLS material is, and the figures each check measured
 * (printed by the runner, never asserted, except a bound the issue sets).
 */
import { join } from 'node:path';
import type { Cluster } from '../helpers/cluster/cluster.js';
import { HUB_NETNS, REPO_ROOT, STATE_ROOT, type ClusterNode } from '../helpers/cluster/layout.js';
import { runCommand, type CommandOutput } from '../helpers/cluster/run-command.js';

export interface ClusterImages {
  launcher: string;
  etcd: string;
  haproxy: string;
  echo: string;
  sandbox: string;
}

export interface ClusterContext {
  cluster: Cluster;
  images: ClusterImages;
  /** Where deploy.sh keeps the CA and the certificates (certs/make-certs.sh). */
  certs: string;
  /** The CA clients check the front's certificate with (deploy.sh made it from the cluster's CA, or the operator gave one). */
  frontCa: string;
  figure(line: string): void;
}

/** One check of `npm run test:cluster`: throws to fail. */
export interface ClusterCheck {
  name: string;
  run(context: ClusterContext): Promise<void>;
}

export const CERTS_DIR = join(STATE_ROOT, 'certs');
/** The stand-in server's port on each node (its network), and the front's. */
export const SERVER_PORT = 8080;
export const FRONT_PORT = 8443;
export const STACK = 'toolcell';

/** Runs a compiled probe (dist/test/cluster/probes/NAME.js) in the hub namespace, as a client of the cluster; returns its JSON. */
export async function hubProbe<T>(name: string, args: string[], timeoutMs = 120_000): Promise<T> {
  const script = join(REPO_ROOT, 'dist', 'test', 'cluster', 'probes', `${name}.js`);
  const { stdout } = await runCommand('ip', ['netns', 'exec', HUB_NETNS, process.execPath, script, ...args], { timeoutMs });
  return JSON.parse(stdout) as T;
}

/** GET a URL from the hub; the status and body (status 0 when nothing answered). Extra curl arguments before the URL. */
export async function hubGet(url: string, curlArgs: string[] = []): Promise<{ status: number; body: string }> {
  const result = await runCommand('ip', ['netns', 'exec', HUB_NETNS, 'curl', '-s', '-m', '10', ...curlArgs, '-o', '-', '-w', '\n%{http_code}', url]).catch(
    (error: Error) => ({
      stdout: `${error.message}\n0`,
    }),
  );
  const text = (result as CommandOutput).stdout;
  const at = text.lastIndexOf('\n');
  return { status: Number(text.slice(at + 1)) || 0, body: text.slice(0, at) };
}

/** The name on every server's certificate (certs/make-certs.sh), which the front checks too. */
export const SERVER_TLS_NAME = 'toolcell-server';

/** GET a path of one node's server from the hub, over TLS, checking its certificate as the front does; `limitSeconds` for the whole call. */
export function hubServerGet(node: ClusterNode, path: string, limitSeconds = 10): Promise<{ status: number; body: string }> {
  return hubGet(`https://${SERVER_TLS_NAME}:${SERVER_PORT}${path}`, [
    '-m',
    String(limitSeconds),
    '--cacert',
    join(CERTS_DIR, 'ca.pem'),
    '--resolve',
    `${SERVER_TLS_NAME}:${SERVER_PORT}:${node.address}`,
  ]);
}

/** `docker` with the first node as the client's engine (a manager, as an operator's would be). */
export function manager(context: ClusterContext): ClusterNode {
  return context.cluster.nodes[0]!;
}

/** Running tasks of a service: node hostname per task. */
export async function runningTasks(context: ClusterContext, service: string, node = manager(context)): Promise<string[]> {
  const { stdout } = await context.cluster.docker(node, [
    'service',
    'ps',
    service,
    '--filter',
    'desired-state=running',
    '--format',
    '{{.Node}} {{.CurrentState}}',
  ]);
  return stdout
    .split('\n')
    .filter((line) => / Running /.test(` ${line} `))
    .map((line) => line.split(' ')[0]!);
}
