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
import { waitFor } from '../../helpers/cluster/run-command.js';
import type { ClusterCheck } from '../context.js';
import { readStep, runScript, succeeded, writeStep } from './sessions.js';
import { etcdFlags, toolcell } from './toolcell.js';

const TENANT = 'mover';

/** A probe that may meet a node whose copy of the tenants lags by a moment (a watch: milliseconds): tried again for 60 s. */
function retried<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  return waitFor(what, () => probe().catch(() => undefined), 60_000, 2000);
}

export const tenantMoveChecks: ClusterCheck[] = [
  {
    name: 'toolcell tenant move --etcd moves a tenant to another node: its file is read through the fronts on the new node, the old copy is gone',
    async run(context) {
      const [from, to] = context.cluster.nodes;
      const key = (await toolcell(['tenant', 'add', TENANT, '--node', from!.hostname, '--limit', 'diskBytes=64m', ...etcdFlags(context)])).stdout.trim();
      const content = `written on ${from!.hostname} before the move\n`;
      const before = await retried('a session of the new tenant', async () => {
        const got = await runScript(context, { key, steps: [writeStep('note.txt', content)] });
        return succeeded(got, 1) ? got : undefined;
      });
      assert.ok(before.session?.startsWith(`${from!.hostname}.`), `its session ${before.session} is on ${from!.hostname}`);
      const image = join(realpathSync(join(from!.dir, 'toolcell', 'hosting')), 'disk-images', `${tenantSlug(TENANT)}.ext4`);
      assert.ok(existsSync(image), `its disk image is on ${from!.hostname}`);

      const started = Date.now();
      const moved = await toolcell(['tenant', 'move', TENANT, '--node', to!.hostname, ...etcdFlags(context)], 300_000);
      context.figure(`tenant moved (64 MiB disk image, drain with no session open) in ${Date.now() - started} ms`);
      assert.equal(moved.stdout.trim(), to!.hostname, moved.stderr);
      assert.ok(!existsSync(image), `the old copy on ${from!.hostname} is deleted`);

      const after = await retried('a session after the move', async () => {
        const got = await runScript(context, { key, steps: [readStep('note.txt')] }, 120_000);
        return succeeded(got, 1) ? got : undefined;
      });
      assert.ok(after.session?.startsWith(`${to!.hostname}.`), `its new session ${after.session} is on ${to!.hostname}`);
      assert.ok(after.results[0]!.text?.includes(content.trim()), `the file written before the move reads the same: ${after.results[0]!.text}`);
    },
  },
];
