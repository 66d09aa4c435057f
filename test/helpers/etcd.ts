/**
 * A real etcd member for tests (Debian's etcd-server, installed by
 * .ci/docker.sh): its own data folder and free ports, TLS both ways with
 * certificates from a throwaway CA made by deploy/swarm/certs/make-certs.sh
 * (the same files a Swarm gets: a member certificate naming `etcd`, and
 * `toolcell-server.pem`, which the servers use as etcd client, as server to
 * clients and to one another). Stopped and removed at teardown.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestFn } from 'ava';
import { connectEtcd, type EtcdConnectionOptions } from '../../src/hosting/cluster/etcd-connection.js';
import { packageRoot } from '../../src/paths.js';
import { freePort } from './free-port.js';
import { missingRequirement } from './missing-requirement.js';

export interface TestEtcd {
  /** `https://127.0.0.1:PORT`, one member. */
  endpoint: string;
  /** The CA, and a certificate and key it signed, good as etcd client, TLS server (`toolcell-server`, 127.0.0.1) and TLS client. */
  certs: { dir: string; ca: string; cert: string; key: string };
  /** What connectEtcd takes to reach it. */
  connection: EtcdConnectionOptions;
  /** The CLI's flags for it: `--etcd URL --etcd-ca … --etcd-cert … --etcd-key … --etcd-server-name etcd`. */
  flags: string[];
  /** Stops the member (SIGTERM, then SIGKILL after 10 s). Teardown does it too. */
  stop(): Promise<void>;
}

/** Where Debian puts it; PATH otherwise. */
function etcdBinary(): string | undefined {
  for (const candidate of ['/usr/bin/etcd', 'etcd']) {
    const probe = spawnSync(candidate, ['--version'], { stdio: 'ignore' });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}

/**
 * `test` for files that need etcd: itself when the binary runs; else, under
 * CI=true, one failing test saying so (.ci/docker.sh installs etcd-server),
 * and elsewhere every test skipped with the reason printed once.
 */
export function requireEtcd<Context>(test: TestFn<Context>, label: string): TestFn<Context> {
  if (etcdBinary() !== undefined) return test;
  return missingRequirement(test, {
    failingTitle: `${label}: etcd is required when CI=true`,
    failure: 'no etcd binary (Debian: apt-get install etcd-server; .ci/docker.sh installs it)',
    reason: `${label}: skipped: no etcd binary (apt-get install etcd-server)`,
  });
}

/** Makes the throwaway CA and certificates with the Swarm's own script. */
function makeCertificates(dir: string): void {
  const made = spawnSync('bash', [join(packageRoot, 'deploy', 'swarm', 'certs', 'make-certs.sh'), dir, 'etcd1'], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`make-certs.sh failed: ${made.stderr}`);
}

/** Starts one member and waits until a client with the test certificate reads from it. */
export async function startEtcd(t: { teardown(fn: () => Promise<void>): void }): Promise<TestEtcd> {
  const binary = etcdBinary();
  if (binary === undefined) throw new Error('no etcd binary (apt-get install etcd-server)');
  const root = await mkdtemp(join(tmpdir(), 'toolcell-etcd-'));
  const certsDir = join(root, 'certs');
  makeCertificates(certsDir);
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const endpoint = `https://127.0.0.1:${clientPort}`;
  const peer = `https://127.0.0.1:${peerPort}`;
  const file = (name: string) => join(certsDir, name);
  const child: ChildProcess = spawn(
    binary,
    [
      `--name=etcd1`,
      `--data-dir=${join(root, 'data')}`,
      `--listen-client-urls=${endpoint}`,
      `--advertise-client-urls=${endpoint}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=etcd1=${peer}`,
      '--initial-cluster-state=new',
      `--cert-file=${file('etcd1.pem')}`,
      `--key-file=${file('etcd1-key.pem')}`,
      '--client-cert-auth',
      `--trusted-ca-file=${file('ca.pem')}`,
      `--peer-cert-file=${file('etcd1.pem')}`,
      `--peer-key-file=${file('etcd1-key.pem')}`,
      '--peer-client-cert-auth',
      `--peer-trusted-ca-file=${file('ca.pem')}`,
      '--log-level=error',
      '--logger=zap',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = once(child, 'exit');
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(root, { recursive: true, force: true });
    })());
  t.teardown(stop);
  const certs = { dir: certsDir, ca: file('ca.pem'), cert: file('toolcell-server.pem'), key: file('toolcell-server-key.pem') };
  const connection: EtcdConnectionOptions = { endpoints: [endpoint], caFile: certs.ca, certFile: certs.cert, keyFile: certs.key, serverName: 'etcd' };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`etcd exited (${child.exitCode}): ${stderr}`);
    const client = connectEtcd(connection);
    try {
      await client.get('/probe').string();
      break;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`etcd did not answer in 60 s: ${String(error)}; ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      client.close();
    }
  }
  return {
    endpoint,
    certs,
    connection,
    flags: ['--etcd', endpoint, '--etcd-ca', certs.ca, '--etcd-cert', certs.cert, '--etcd-key', certs.key, '--etcd-server-name', 'etcd'],
    stop,
  };
}
