import { Option, type Command } from 'commander';
import type { EtcdConnectionOptions } from '../../hosting/index.js';

/** The flags naming a cluster's etcd, as commander parses them. */
export interface EtcdCliOptions {
  etcd?: string;
  etcdCa?: string;
  etcdCert?: string;
  etcdKey?: string;
  etcdServerName?: string;
}

/** Adds --etcd URLS and its TLS files (each also from the environment, as a Swarm task or an operator's shell sets them). */
export function addEtcdOptions<T extends Command>(command: T, what: string): T {
  command
    .addOption(new Option('--etcd <urls>', `${what}: the cluster's etcd members, comma-separated https://HOST:2379 URLs`).env('TOOLCELL_ETCD'))
    .addOption(new Option('--etcd-ca <file>', "with --etcd: the cluster's CA (PEM)").env('TOOLCELL_ETCD_CA'))
    .addOption(new Option('--etcd-cert <file>', "with --etcd: this client's certificate (PEM), signed by that CA").env('TOOLCELL_ETCD_CERT'))
    .addOption(new Option('--etcd-key <file>', 'with --etcd: the key of --etcd-cert (PEM)').env('TOOLCELL_ETCD_KEY'))
    .addOption(
      new Option('--etcd-server-name <name>', "with --etcd: the name the members' certificates carry (default the URL's host; deploy/swarm's: etcd)").env(
        'TOOLCELL_ETCD_SERVER_NAME',
      ),
    );
  return command;
}

/** The etcd connection the flags name; undefined without --etcd; a usage error (string) when a TLS file is missing. */
export function etcdConnectionFrom(options: EtcdCliOptions): EtcdConnectionOptions | undefined | string {
  if (options.etcd === undefined) {
    for (const [value, flag] of [
      [options.etcdCa, '--etcd-ca'],
      [options.etcdCert, '--etcd-cert'],
      [options.etcdKey, '--etcd-key'],
      [options.etcdServerName, '--etcd-server-name'],
    ] as const)
      if (value !== undefined) return `${flag} needs --etcd URLS`;
    return undefined;
  }
  if (options.etcdCa === undefined || options.etcdCert === undefined || options.etcdKey === undefined)
    return '--etcd needs --etcd-ca, --etcd-cert and --etcd-key (etcd is reached with TLS and a client certificate only)';
  return {
    endpoints: options.etcd
      .split(',')
      .map((url) => url.trim())
      .filter((url) => url !== ''),
    caFile: options.etcdCa,
    certFile: options.etcdCert,
    keyFile: options.etcdKey,
    ...(options.etcdServerName !== undefined ? { serverName: options.etcdServerName } : {}),
  };
}
