/**
 * A toolcell that dies without closing its Docker backend leaves an egress
 * network and its host firewall rules behind; the next start-up removes
 * both (containers of dead owners go first, as before).
 */
import anyTest from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { removeLeftoverContainers } from '../../../src/backends/docker/cleanup.js';
import { removeLeftoverEgressNetworks } from '../../../src/backends/docker/egress-network.js';
import { createEngineClient } from '../../../src/backends/docker/engine.js';
import { packageRoot } from '../../../src/paths.js';
import { requireDocker } from '../../helpers/docker.js';

const test = await requireDocker(anyTest, 'sandbox/egress-cleanup');

const CRASHING_OWNER = `
import { createDockerBackend } from ${JSON.stringify(join(packageRoot, 'dist/src/backends/docker/docker-backend.js'))};
const backend = await createDockerBackend({ warmPool: 0, removeLeftovers: false, egress: { allow: ['example.com'] } });
process.stdout.write(backend.backendId + '\\n');
process.kill(process.pid, 'SIGKILL');
`;

function firewallRules(bridge: string): string[] {
  return execFileSync('iptables', ['-w', '5', '-S', 'INPUT'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(`toolcell egress ${bridge}`));
}

test('an egress network and firewall rules left by a killed toolcell are removed at the next start-up', async (t) => {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CRASHING_OWNER], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => child.on('exit', resolve));
  const backendId = out.trim();
  t.regex(backendId, /^[0-9a-f]{12}$/);
  const docker = createEngineClient();
  const named = async (): Promise<number> => (await docker.listNetworks({ filters: { name: [`toolcell-egress-${backendId}`] } })).length;
  t.is(await named(), 1, 'the dead owner left its network');
  t.is(firewallRules(`tc${backendId}`).length, 2, 'and its IPv4 rules');

  await removeLeftoverContainers(docker);
  await removeLeftoverEgressNetworks(docker);
  t.is(await named(), 0);
  t.deepEqual(firewallRules(`tc${backendId}`), []);
});
