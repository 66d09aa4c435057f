/**
 * The real toolcell server in the stack (deploy/swarm/server/), in place of
 * the stand-in: deploy.sh again with `toolcell serve --tenants … --etcd …`
 * per node through the launcher; tenants added with `toolcell tenant add
 * --etcd` are placed on different nodes by load; the MCP SDK client through
 * the fronts runs a shell call and file calls for each, its session staying
 * on its tenant's node; a key revoked through one etcd member is refused by
 * every node within 2 s.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HUB_NETNS, REPO_ROOT, STATE_ROOT } from '../../helpers/cluster/layout.js';
import { loadImages, saveImages } from '../../helpers/cluster/images.js';
import { runCommand, waitFor } from '../../helpers/cluster/run-command.js';
import { ensureServerImage } from '../../helpers/cluster/server-image.js';
import { CERTS_DIR, FRONT_PORT, hubGet, hubProbe, hubServerGet, manager, SERVER_PORT, type ClusterCheck, type ClusterContext } from '../context.js';
import { fronts } from './front.js';
import { runDeployScript } from './stack.js';

const SERVER = 'toolcell-server';
const TENANTS = ['alpha', 'beta', 'gamma'];
const keys = new Map<string, string>();
const placement = new Map<string, string>();
/** Each node's metrics listener (`--metrics`), on the node's address: what Prometheus scrapes (deploy/swarm/DESIGN.md, Operations). */
export const METRICS_PORT = 9464;
/** The server's audit log on each node, which the launcher relays to the service's log. */
export const AUDIT_FILE = '/var/lib/toolcell/audit.log';

/** The tenants the checks placed, one per node: name → key and node. */
export function placedTenants(): { name: string; key: string; node: string }[] {
  return TENANTS.filter((name) => keys.has(name) && placement.has(name)).map((name) => ({ name, key: keys.get(name)!, node: placement.get(name)! }));
}

/** An operator's own CA and a certificate for the front from it, naming every node's address (deploy.sh --front-cert/--front-key). */
async function operatorFrontCertificate(context: ClusterContext): Promise<{ ca: string; cert: string; key: string }> {
  const dir = join(STATE_ROOT, 'operator-front');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const at = (name: string) => join(dir, name);
  const sans = ['DNS:mcp.example.test', ...context.cluster.nodes.map((node) => `IP:${node.address}`)].join(',');
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await runCommand('openssl', [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    at('ca-key.pem'),
    '-out',
    at('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=operator CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  ]);
  await runCommand('openssl', ['req', ...ec, '-keyout', at('front-key.pem'), '-out', at('front.csr'), '-subj', '/CN=mcp.example.test']);
  await writeFile(at('ext'), `subjectAltName=${sans}\nextendedKeyUsage=serverAuth\n`);
  await runCommand('openssl', [
    'x509',
    '-req',
    '-in',
    at('front.csr'),
    '-CA',
    at('ca.pem'),
    '-CAkey',
    at('ca-key.pem'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    at('ext'),
    '-out',
    at('front.pem'),
  ]);
  return { ca: at('ca.pem'), cert: at('front.pem'), key: at('front-key.pem') };
}

/** The etcd flags of a client in the hub (an operator's machine): every member, the cluster's CA and a client certificate. */
export function etcdFlags(context: ClusterContext, first = 0): string[] {
  const nodes = [...context.cluster.nodes.slice(first), ...context.cluster.nodes.slice(0, first)];
  return [
    '--etcd',
    nodes.map((node) => `https://${node.address}:2379`).join(','),
    '--etcd-ca',
    join(CERTS_DIR, 'ca.pem'),
    '--etcd-cert',
    join(CERTS_DIR, 'toolcell-server.pem'),
    '--etcd-key',
    join(CERTS_DIR, 'toolcell-server-key.pem'),
    '--etcd-server-name',
    'etcd',
  ];
}

/** `toolcell ARGS…` from the hub namespace. */
export function toolcell(args: string[], timeoutMs = 60_000): Promise<{ stdout: string; stderr: string }> {
  return runCommand('ip', ['netns', 'exec', HUB_NETNS, process.execPath, join(REPO_ROOT, 'dist', 'src', 'cli', 'bin.js'), ...args], { timeoutMs });
}

/** What the checks add to deploy.sh's default server command (its --server-arg). */
const SERVER_ARGS = ['--approval', 'yolo', '--drain-seconds', '30', '--metrics', `0.0.0.0:${METRICS_PORT}`];

/** The server's command on every node: deploy.sh's default (checked against it when deploying) and SERVER_ARGS. */
export function serverCommand(context: ClusterContext): string[] {
  const secrets = '/run/secrets';
  return [
    'serve',
    '--http',
    `0.0.0.0:${SERVER_PORT}`,
    '--tenants',
    '/var/lib/toolcell/tenants.json',
    '--data-dir',
    '/var/lib/toolcell/hosting',
    '--audit',
    '/var/lib/toolcell/audit.log',
    '--tls-cert',
    `${secrets}/toolcell-server.pem`,
    '--tls-key',
    `${secrets}/toolcell-server-key.pem`,
    '--etcd',
    context.cluster.nodes.map((node) => `https://${node.address}:2379`).join(','),
    '--etcd-ca',
    `${secrets}/toolcell-ca.pem`,
    '--etcd-cert',
    `${secrets}/toolcell-server.pem`,
    '--etcd-key',
    `${secrets}/toolcell-server-key.pem`,
    '--etcd-server-name',
    'etcd',
    '--node-url',
    `https://@NODE_ADDRESS@:${SERVER_PORT}`,
    ...SERVER_ARGS,
  ];
}

/** Audit lines of one node (its /var/lib/toolcell is its folder's toolcell/ on the machine). */
async function auditLines(context: ClusterContext, hostname: string): Promise<Array<Record<string, unknown>>> {
  const node = context.cluster.nodes.find((n) => n.hostname === hostname)!;
  const text = await readFile(join(node.dir, 'toolcell', 'audit.log'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

export const toolcellChecks: ClusterCheck[] = [
  {
    name: 'deploy.sh deploys the real toolcell server on every node (toolcell serve --tenants --etcd through the launcher), ready behind every front',
    async run(context) {
      const started = Date.now();
      const image = await ensureServerImage();
      const archive = await saveImages('server', [image]);
      const loadMs = await Promise.all(context.cluster.nodes.map((node) => loadImages(node, archive)));
      context.figure(`server image: built or found and loaded into 3 nodes at once in ${Date.now() - started} ms (load ${loadMs.join(', ')} ms)`);
      const deployedAt = Date.now();
      // As an operator would: the front serves clients the operator's own certificate.
      const front = await operatorFrontCertificate(context);
      // deploy.sh's default server command (etcd on the labelled nodes' addresses) is the one this harness means.
      const serverArgs = SERVER_ARGS.flatMap((arg) => ['--server-arg', arg]);
      const printed = await runCommand(
        'bash',
        [join(REPO_ROOT, 'deploy', 'swarm', 'deploy.sh'), '--print-server-cmd', '--server-port', String(SERVER_PORT), ...serverArgs],
        { env: { DOCKER_HOST: `unix://${manager(context).socket}` } },
      );
      assert.deepEqual(JSON.parse(printed.stdout), serverCommand(context));
      // No TOOLCELL_SERVER_CMD nor TOOLCELL_AUDIT_FILE: deploy.sh's defaults, as the README has an operator deploy.
      const said = await runDeployScript(context, { TOOLCELL_SERVER_IMAGE: image }, ['--front-cert', front.cert, '--front-key', front.key, ...serverArgs]);
      assert.doesNotMatch(said, /no --front-cert/);
      context.frontCa = front.ca;
      // The fronts roll to the new certificate one node at a time: each serves it, checked against the operator's CA.
      for (const node of context.cluster.nodes)
        await waitFor(
          `the front on ${node.hostname} serving the operator's certificate`,
          async () => ((await hubGet(`https://${node.address}:${FRONT_PORT}/healthz`, ['--cacert', front.ca])).status === 200 ? true : undefined),
          180_000,
          1000,
        );
      for (const node of context.cluster.nodes) {
        await waitFor(
          `toolcell serving on ${node.hostname}`,
          async () => {
            const running = (
              await context.cluster.docker(node, ['inspect', '--format', '{{.Config.Image}}', SERVER]).catch(() => ({ stdout: '' }))
            ).stdout.trim();
            if (running !== image) return undefined;
            return (await hubServerGet(node, '/readyz')).status === 200 ? true : undefined;
          },
          240_000,
          1000,
        );
      }
      // Serving means announced in etcd too (placement chooses among those): a tenant list through etcd answers, and every node's record is there.
      await waitFor(
        'every node registered in etcd',
        async () => {
          const { results } = await hubProbe<{ results: { status: number; body: string }[] }>('etcd-call', [
            CERTS_DIR,
            `${manager(context).address}:2379`,
            '/v3/kv/range',
            JSON.stringify({ key: Buffer.from('/toolcell/nodes/').toString('base64'), range_end: Buffer.from('/toolcell/nodes0').toString('base64') }),
          ]);
          const count = Number((JSON.parse(results[0]?.body ?? '{}') as { count?: string }).count ?? 0);
          return count === context.cluster.nodes.length ? true : undefined;
        },
        60_000,
        500,
      );
      context.figure(`toolcell deployed over the stand-in, every node serving and registered: ${Date.now() - deployedAt} ms`);
    },
  },
  {
    name: 'toolcell tenant add --etcd places three tenants on three different nodes by load; tenant list --etcd shows where',
    async run(context) {
      for (const name of TENANTS) {
        const { stdout } = await toolcell(['tenant', 'add', name, ...etcdFlags(context)]);
        keys.set(name, stdout.trim());
      }
      const { stdout } = await toolcell(['tenant', 'list', '--json', ...etcdFlags(context, 1)]);
      const listed = (JSON.parse(stdout) as { tenants: { name: string; node: string | null; keys: unknown[] }[] }).tenants;
      for (const tenant of listed) if (tenant.node !== null) placement.set(tenant.name, tenant.node);
      assert.deepEqual([...placement.keys()].sort(), [...TENANTS].sort(), `every tenant placed: ${JSON.stringify(listed)}`);
      assert.deepEqual(
        [...placement.values()].sort(),
        context.cluster.nodes.map((node) => node.hostname).sort(),
        `one tenant per node: ${JSON.stringify([...placement])}`,
      );
      for (const key of keys.values()) assert.match(key, /^tc_/);
    },
  },
  {
    name: 'the MCP SDK client through the fronts runs a shell call and file calls for each tenant, on its node; every request of a session stays there',
    async run(context) {
      const frontList = fronts(context).split(',');
      for (const name of TENANTS) {
        const home = placement.get(name)!;
        const got = await hubProbe<{ session: string; shell: string; file: string; written: string; requests: string[] }>(
          'mcp-tenant',
          [context.frontCa, keys.get(name)!, ...frontList],
          300_000,
        );
        assert.match(got.shell, /shell-42/, `${name}'s shell call: ${got.shell}`);
        assert.ok(got.file.includes(got.written), `${name}'s file call reads what it wrote: ${got.file}`);
        assert.ok(got.session.startsWith(`${home}.`), `${name}'s session ${got.session} names its node ${home}`);
        assert.equal(new Set(got.requests).size, frontList.length, 'the session’s requests went through every front');
        // Its node recorded the session and its calls, with its own name; no other node saw the session.
        const lines = await waitFor(
          `${name}'s calls in ${home}'s audit log`,
          async () => {
            const found = (await auditLines(context, home)).filter((line) => line.session === got.session);
            return found.filter((line) => line.event === 'tool_call').length >= 3 ? found : undefined;
          },
          30_000,
        );
        for (const line of lines) assert.equal(line.node, home, `audit line names its node: ${JSON.stringify(line)}`);
        assert.ok(lines.every((line) => line.tenant === name));
        for (const node of context.cluster.nodes) {
          if (node.hostname === home) continue;
          const elsewhere = (await auditLines(context, node.hostname)).filter((line) => line.session === got.session);
          assert.equal(elsewhere.length, 0, `${node.hostname} saw nothing of ${name}'s session: ${JSON.stringify(elsewhere)}`);
        }
      }
    },
  },
];

/** Last of the real server's checks: it revokes a tenant's key. */
export const revocationChecks: ClusterCheck[] = [
  {
    name: 'a key revoked through one etcd member is refused by every node within 2 s (each node opened a session with it before: its own, or forwarded)',
    async run(context) {
      const name = TENANTS[0]!;
      const home = placement.get(name)!;
      const other = context.cluster.nodes.findIndex((node) => node.hostname !== home);
      const revoke = [process.execPath, join(REPO_ROOT, 'dist', 'src', 'cli', 'bin.js'), 'tenant', 'revoke', name, ...etcdFlags(context, other)];
      const got = await hubProbe<{ before: number[]; refusedAfterMs: number[] }>(
        'revoke-everywhere',
        [CERTS_DIR, String(SERVER_PORT), context.cluster.nodes.map((node) => node.address).join(','), keys.get(name)!, '--', ...revoke],
        120_000,
      );
      context.figure(
        `key revoked through ${context.cluster.nodes[other]!.hostname}'s etcd member, refused by each node after: ${got.refusedAfterMs.join(', ')} ms`,
      );
      assert.deepEqual(got.before, [200, 200, 200], 'before: every node opens a session with the key');
      for (const [index, ms] of got.refusedAfterMs.entries())
        assert.ok(ms >= 0 && ms < 2000, `${context.cluster.nodes[index]!.hostname} refused the revoked key ${ms < 0 ? 'never (20 s)' : `after ${ms} ms`}`);
    },
  },
];
