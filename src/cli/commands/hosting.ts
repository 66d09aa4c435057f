import type { Command } from 'commander';
import { errorMessage, isToolcellError, ToolcellError, ToolErrorType } from '../../errors.js';
import { EXIT_FAILURE, EXIT_OK, exitCodeForSetUpFailure } from '../exit-codes.js';
import { escapeText, terminalJson } from '../../ui/escape-text.js';
import { sessionsTable } from './hosting-table.js';
import { closeAdminSession, listAdminSessions, loadCluster, readAdminKeyFile, type EtcdConnectionOptions } from '../../hosting/index.js';
import { addEtcdOptions, etcdConnectionFrom, type EtcdCliOptions } from './cluster-options.js';

interface AdminCliOptions {
  server: string;
  adminKeyFile: string;
  json?: boolean;
}

const EXIT_CODES_HELP = `
Exit codes:
  0    done
  1    the server refused or could not be reached (admin_request_failed)
  2    usage error, or an admin key file that cannot be used (invalid_input)`;

/**
 * Registers `toolcell hosting sessions` and `toolcell hosting close`: the
 * operator's view of a running hosting server, through its admin API and
 * the admin key (never a tenant key). Both actions are audited by the server.
 */
export function registerHostingCommand(program: Command): void {
  const hosting = program.command('hosting').description('Operate a running hosting server (toolcell serve --tenants) with its admin key.');
  const common = (command: Command): Command =>
    command
      .requiredOption('--server <url>', "the hosting server's admin listener (serve --admin), e.g. http://127.0.0.1:9465")
      .requiredOption('--admin-key-file <file>', 'the file holding the admin key the server was started with (mode 600)')
      .option('--json', 'print JSON instead of text');

  const sessions = hosting
    .command('sessions')
    .description(
      "List the live MCP sessions: tenant, subject, runtime, age, calls and container memory; with --etcd, every node's sessions of a cluster, with a NODE column.",
    )
    .option('--server <url>', "the hosting server's admin listener (serve --admin), e.g. http://127.0.0.1:9465")
    .option('--admin-key-file <file>', 'the file holding the admin key the server was started with (mode 600)')
    .option('--json', 'print JSON instead of text')
    .option('--tenant <name>', "only this tenant's sessions");
  addEtcdOptions(sessions, 'instead of --server and --admin-key-file')
    .addHelpText(
      'after',
      `${EXIT_CODES_HELP}\n\nEach node of a cluster publishes its sessions in etcd (at most 500, refreshed every 3 s; a node\nthat is gone drops out within 10 s), so --etcd lists them all without an admin key; memory is\nnot among them.\n\nExamples:\n  toolcell hosting sessions --server http://127.0.0.1:9465 --admin-key-file /etc/toolcell/admin.key --tenant acme\n  toolcell hosting sessions --etcd https://10.0.0.1:2379 --etcd-ca ca.pem --etcd-cert me.pem --etcd-key me-key.pem`,
    )
    .action(async (options: Partial<AdminCliOptions> & EtcdCliOptions & { tenant?: string }) => {
      process.exitCode = await run('sessions', async () => {
        const cluster = etcdConnectionFrom(options);
        if (typeof cluster === 'string') throw new ToolcellError(ToolErrorType.INVALID_INPUT, cluster);
        if (cluster !== undefined) {
          if (options.server !== undefined || options.adminKeyFile !== undefined)
            throw new ToolcellError(ToolErrorType.INVALID_INPUT, 'give --etcd (a cluster) or --server with --admin-key-file (one server), not both');
          return listClusterSessions(cluster, options);
        }
        if (options.server === undefined || options.adminKeyFile === undefined)
          throw new ToolcellError(ToolErrorType.INVALID_INPUT, 'give --server URL and --admin-key-file FILE (one server), or --etcd URLS (a cluster)');
        const adminKey = await readAdminKeyFile(options.adminKeyFile);
        const sessions = await listAdminSessions({ server: options.server, adminKey, ...(options.tenant !== undefined ? { tenant: options.tenant } : {}) });
        process.stdout.write(options.json ? `${terminalJson(sessions)}\n` : sessionsTable(sessions));
      });
    });

  common(
    hosting
      .command('close')
      .argument('<session>', 'the session id (from `toolcell hosting sessions`)')
      .description('Close one live session and remove its container.'),
  )
    .addHelpText(
      'after',
      `${EXIT_CODES_HELP}\n\nExample:\n  toolcell hosting close 3f0c…e2 --server http://127.0.0.1:9465 --admin-key-file /etc/toolcell/admin.key`,
    )
    .action(async (session: string, options: AdminCliOptions) => {
      process.exitCode = await run('close', async () => {
        const adminKey = await readAdminKeyFile(options.adminKeyFile);
        await closeAdminSession({ server: options.server, adminKey, session });
        process.stdout.write(options.json ? `${terminalJson({ closed: true, id: session }, 0)}\n` : `Closed session ${escapeText(session)}.\n`);
      });
    });
}

/** Every node's sessions from etcd (hosting/cluster/session-summary.ts). */
async function listClusterSessions(connection: EtcdConnectionOptions, options: { tenant?: string; json?: boolean }): Promise<void> {
  const { clusterSessions, connectEtcd } = await loadCluster();
  const etcd = connectEtcd(connection);
  try {
    const { sessions, more } = await clusterSessions(etcd);
    const shown = sessions.filter((session) => options.tenant === undefined || session.tenant === options.tenant);
    // The one-host shape (an array), each session with its node.
    process.stdout.write(options.json ? `${terminalJson(shown)}\n` : sessionsTable(shown, { nodes: true }));
    if (more > 0) process.stderr.write(`toolcell hosting sessions: ${more} more not listed (each node publishes its 500 oldest)\n`);
  } finally {
    etcd.close();
  }
}

async function run(command: string, action: () => Promise<void>): Promise<number> {
  try {
    await action();
    return EXIT_OK;
  } catch (error) {
    const code = isToolcellError(error) ? ` [${error.code}]` : '';
    // The message may quote the server's answer: escaped like every line here.
    process.stderr.write(`toolcell hosting ${command}: ${escapeText(errorMessage(error))}${code}\n`);
    return isToolcellError(error) ? exitCodeForSetUpFailure(error) : EXIT_FAILURE;
  }
}
