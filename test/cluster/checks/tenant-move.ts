/**
 * `toolcell tenant move --etcd` on the real stack (after checks/toolcell.ts
 * deployed the real server): a tenant placed on one node writes a file
 * through the fronts, is moved to another node with the operator's command
 * from the hub, and reads the same file through the fronts in a session
 * that now lives on the new node; the old node's disk image is gone.
 */
import assert from 'node:assert/strict';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { tenantSlug } from '../../../src/hosting/tenants/disk/tenant-slug.js';
import { HUB_NETNS, REPO_ROOT } from '../../helpers/cluster/layout.js';
import { runCommand, waitFor } from '../../helpers/cluster/run-command.js';
import { CERTS_DIR, hubProbe, type ClusterCheck, type ClusterContext } from '../context.js';
import { fronts } from './front.js';

const TENANT = 'mover';

function etcdFlags(context: ClusterContext): string[] {
  return [
    '--etcd',
    context.cluster.nodes.map((node) => `https://${node.address}:2379`).join(','),
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

function toolcell(args: string[], timeoutMs = 60_000): Promise<{ stdout: string; stderr: string }> {
  return runCommand('ip', ['netns', 'exec', HUB_NETNS, process.execPath, join(REPO_ROOT, 'dist', 'src', 'cli', 'bin.js'), ...args], { timeoutMs });
}

/** A probe that may meet a node whose copy of the tenants lags by a moment (a watch: milliseconds): tried again for 30 s. */
function retried<T>(what: string, probe: () => Promise<T>): Promise<T> {
  return waitFor(what, () => probe().catch(() => undefined), 30_000, 1000);
}

export const tenantMoveChecks: ClusterCheck[] = [
  {
    name: 'toolcell tenant move --etcd moves a tenant to another node: its file is read through the fronts on the new node, the old copy is gone',
    async run(context) {
      const [from, to] = context.cluster.nodes;
      const key = (await toolcell(['tenant', 'add', TENANT, '--node', from!.hostname, '--limit', 'diskBytes=64m', ...etcdFlags(context)])).stdout.trim();
      const frontList = fronts(context).split(',');
      const before = await retried('a session of the new tenant', () =>
        hubProbe<{ session: string; written: string; file: string }>('mcp-tenant', [key, ...frontList], 300_000),
      );
      assert.ok(before.session.startsWith(`${from!.hostname}.`), `its session ${before.session} is on ${from!.hostname}`);
      const image = join(realpathSync(join(from!.dir, 'toolcell', 'hosting')), 'disk-images', `${tenantSlug(TENANT)}.ext4`);
      assert.ok(existsSync(image), `its disk image is on ${from!.hostname}`);

      const started = Date.now();
      const moved = await toolcell(['tenant', 'move', TENANT, '--node', to!.hostname, ...etcdFlags(context)], 300_000);
      context.figure(`tenant moved (64 MiB disk image, drain with no session open) in ${Date.now() - started} ms`);
      assert.equal(moved.stdout.trim(), to!.hostname, moved.stderr);
      assert.ok(!existsSync(image), `the old copy on ${from!.hostname} is deleted`);

      const after = await retried('a session after the move', () =>
        hubProbe<{ session: string; file: string }>('tenant-read', [key, frontList[2] ?? frontList[0]!, 'note.txt'], 120_000),
      );
      assert.ok(after.session.startsWith(`${to!.hostname}.`), `its new session ${after.session} is on ${to!.hostname}`);
      assert.ok(after.file.includes(before.written), `the file written before the move reads the same: ${after.file}`);
    },
  },
];
