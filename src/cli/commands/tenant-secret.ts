import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { errorMessage, isToolcellError } from '../../errors.js';
import { readTenantsFile, writeTenantsFile } from '../../hosting/index.js';
import { SecretBox, SECRETS_KEY_FILE } from '../../secrets/secret-box.js';
import { MAX_SECRET_BYTES, secretNameProblem, secretValueProblem } from '../../secrets/secret-rules.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';
import { readInput } from '../read-input.js';
import { defaultDataDir } from './serve-hosting.js';

interface SecretOptions {
  tenants: string;
  dataDir?: string;
  json?: boolean;
}

class UsageError extends Error {}

const tenantsOption = () => new Option('--tenants <file>', 'the tenants file').env('TOOLCELL_TENANTS').makeOptionMandatory();
const dataDirOption = () =>
  new Option('--data-dir <dir>', `the server's --data-dir, where its secrets key is (${SECRETS_KEY_FILE}, mode 0600; default ~/.toolcell/hosting)`);

/**
 * `toolcell tenant secret set|list|rm`: a tenant's secrets, the environment
 * values its sandboxed commands get. A value is read from stdin only (never
 * an argument: those show in `ps` and shell history), sealed with the key in
 * the server's data dir, and stored sealed in the tenants file; nothing
 * prints it again.
 */
export function registerTenantSecretCommand(tenant: Command): void {
  const secret = tenant
    .command('secret')
    .description("Manage a tenant's secrets: environment values its sandboxed commands get, redacted from their output, stored sealed.");

  secret
    .command('set <tenant> <name>')
    .description('Set secret NAME of a tenant to the value read from stdin (one trailing line break dropped); new sessions get it.')
    .addOption(tenantsOption())
    .addOption(dataDirOption())
    .addHelpText(
      'after',
      `
The value is read from stdin, never from an argument, and never printed. It
is sealed (AES-256-GCM) with the key in <data-dir>/${SECRETS_KEY_FILE}, made
(mode 0600) on first use: the tenants file alone does not reveal it. Give the
same --data-dir as the server's.

Example:
  printf %s "$NPM_TOKEN" | toolcell tenant secret set acme NPM_TOKEN --tenants /srv/toolcell/tenants.json --data-dir /srv/toolcell`,
    )
    .action(async (name: string, key: string, options: SecretOptions) => {
      process.exitCode = await run('set', async () => {
        const nameProblem = secretNameProblem(key);
        if (nameProblem) throw new UsageError(`secret name ${JSON.stringify(key)} ${nameProblem}`);
        const file = resolve(options.tenants);
        const content = (await readTenantsFile(file))!;
        const entry = content.tenants[name];
        if (!entry) throw new UsageError(`no tenant ${JSON.stringify(name)} in ${file}`);
        if ((process.stdin as { isTTY?: boolean }).isTTY) {
          throw new UsageError(
            `pipe the value to stdin (printf %s "$VALUE" | toolcell tenant secret set ${name} ${key} …): it is never read from the terminal or an argument`,
          );
        }
        const value = (await readInput('-', { maxBytes: MAX_SECRET_BYTES + 2 })).replace(/\r?\n$/, '');
        const valueProblem = secretValueProblem(value);
        if (valueProblem) throw new UsageError(`the value of ${key} ${valueProblem}`);
        const box = await SecretBox.open(resolve(options.dataDir ?? defaultDataDir()), { create: true });
        entry.secrets = { ...entry.secrets, [key]: { sealed: box.seal(name, key, value), updatedAt: new Date().toISOString() } };
        await writeTenantsFile(file, content);
        process.stderr.write(`toolcell tenant secret: set ${key} of ${name} (new sessions get it)\n`);
      });
    });

  secret
    .command('list <tenant>')
    .description("List a tenant's secrets: names and when each was set, never a value.")
    .addOption(tenantsOption())
    .option('--json', 'print {"secrets": [{"name", "updatedAt"}]}')
    .action(async (name: string, options: SecretOptions) => {
      process.exitCode = await run('list', async () => {
        const entry = (await readTenantsFile(resolve(options.tenants)))!.tenants[name];
        if (!entry) throw new UsageError(`no tenant ${JSON.stringify(name)} in ${options.tenants}`);
        const secrets = Object.entries(entry.secrets ?? {}).map(([key, secret]) => ({ name: key, updatedAt: secret.updatedAt }));
        if (options.json) return void process.stdout.write(`${JSON.stringify({ secrets })}\n`);
        if (secrets.length === 0) return void process.stdout.write('no secrets\n');
        for (const secret of secrets) process.stdout.write(`${secret.name}  set ${secret.updatedAt}\n`);
      });
    });

  secret
    .command('rm <tenant> <name>')
    .description('Remove secret NAME of a tenant; new sessions no longer get it (running sessions keep what they have).')
    .addOption(tenantsOption())
    .action(async (name: string, key: string, options: SecretOptions) => {
      process.exitCode = await run('rm', async () => {
        const file = resolve(options.tenants);
        const content = (await readTenantsFile(file))!;
        const entry = content.tenants[name];
        if (!entry) throw new UsageError(`no tenant ${JSON.stringify(name)} in ${file}`);
        if (!entry.secrets?.[key]) throw new UsageError(`tenant ${name} has no secret ${JSON.stringify(key)}`);
        const { [key]: _removed, ...rest } = entry.secrets;
        if (Object.keys(rest).length > 0) entry.secrets = rest;
        else delete entry.secrets;
        await writeTenantsFile(file, content);
        process.stderr.write(`toolcell tenant secret: removed ${key} of ${name}\n`);
      });
    });
}

async function run(command: string, body: () => Promise<void>): Promise<number> {
  try {
    await body();
    return EXIT_OK;
  } catch (error) {
    process.stderr.write(`toolcell tenant secret ${command}: ${errorMessage(error)}\n`);
    return error instanceof UsageError || isToolcellError(error) ? EXIT_USAGE : EXIT_FAILURE;
  }
}
