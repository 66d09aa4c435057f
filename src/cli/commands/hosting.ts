import type { Command } from 'commander';
import { errorMessage, isToolcellError } from '../../errors.js';
import { EXIT_FAILURE, EXIT_OK, exitCodeForSetUpFailure } from '../exit-codes.js';
import { escapeText, terminalJson } from '../../ui/escape-text.js';
import { sessionsTable } from './hosting-table.js';
import { closeAdminSession, listAdminSessions, readAdminKeyFile } from '../../hosting/index.js';

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

  common(hosting.command('sessions').description('List the live MCP sessions: tenant, subject, runtime, age, calls and container memory.'))
    .option('--tenant <name>', "only this tenant's sessions")
    .addHelpText(
      'after',
      `${EXIT_CODES_HELP}\n\nExample:\n  toolcell hosting sessions --server http://127.0.0.1:9465 --admin-key-file /etc/toolcell/admin.key --tenant acme`,
    )
    .action(async (options: AdminCliOptions & { tenant?: string }) => {
      process.exitCode = await run('sessions', async () => {
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
