import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { errorMessage, isToolcellError } from '../../errors.js';
import { readTenantsFile, writeTenantsFile } from '../../hosting/index.js';
import { buildWithProgress } from '../build-with-progress.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';

interface ImageOptions {
  tenants: string;
  verbose?: boolean;
}

class UsageError extends Error {}

const tenantsOption = () => new Option('--tenants <file>', 'the tenants file').env('TOOLCELL_TENANTS').makeOptionMandatory();

/**
 * `toolcell tenant image set|rm|build`: a tenant's own sandbox image. The
 * tenants file names a Dockerfile (FROM toolcell's image); the operator
 * builds it here, with the progress of `toolcell sandbox build`; the server
 * only runs it, and refuses the tenant's commands until it is built.
 */
export function registerTenantImageCommand(tenant: Command): void {
  const image = tenant
    .command('image')
    .description("A tenant's own sandbox image: a Dockerfile built FROM toolcell's image by the operator, run for its sessions.");

  image
    .command('set <tenant> <dockerfile>')
    .description('Give a tenant its own sandbox image, built from DOCKERFILE (run toolcell tenant image build next).')
    .addOption(tenantsOption())
    .addHelpText(
      'after',
      `
The Dockerfile starts with
  ARG TOOLCELL_SANDBOX_IMAGE
  FROM \${TOOLCELL_SANDBOX_IMAGE}
and is built with no context (COPY and ADD have no files to take). Whatever it
adds (USER, ENTRYPOINT, ENV, a replaced supervisor), the container keeps
toolcell's supervisor and hardening; a VOLUME is refused.`,
    )
    .action(async (name: string, dockerfile: string, options: ImageOptions) => {
      process.exitCode = await run('set', async () => {
        const path = resolve(dockerfile);
        await readFile(path, 'utf8').catch((error: unknown) => {
          throw new UsageError(`cannot read ${path}: ${errorMessage(error)}`);
        });
        const file = resolve(options.tenants);
        const content = (await readTenantsFile(file))!;
        const entry = content.tenants[name];
        if (!entry) throw new UsageError(`no tenant ${JSON.stringify(name)} in ${file}`);
        entry.image = { dockerfile: path };
        await writeTenantsFile(file, content);
        process.stderr.write(`toolcell tenant image: ${name} runs the image of ${path}; build it with toolcell tenant image build ${name}\n`);
      });
    });

  image
    .command('rm <tenant>')
    .description("Take a tenant back to toolcell's own sandbox image (new sessions).")
    .addOption(tenantsOption())
    .action(async (name: string, options: ImageOptions) => {
      process.exitCode = await run('rm', async () => {
        const file = resolve(options.tenants);
        const content = (await readTenantsFile(file))!;
        const entry = content.tenants[name];
        if (!entry) throw new UsageError(`no tenant ${JSON.stringify(name)} in ${file}`);
        delete entry.image;
        await writeTenantsFile(file, content);
      });
    });

  image
    .command('build <tenant>')
    .description(
      "Build a tenant's sandbox image (toolcell-custom:<hash of the base image and the Dockerfile>), with progress on stderr; the tag goes to stdout.",
    )
    .addOption(tenantsOption())
    .option('--verbose', 'print every line the build prints, not only its phases and steps')
    .action(async (name: string, options: ImageOptions) => {
      const entry = await readTenantsFile(resolve(options.tenants))
        .then((content) => content!.tenants[name])
        .catch((error: unknown) => {
          process.stderr.write(`toolcell tenant image build: ${errorMessage(error)}\n`);
          return null;
        });
      if (entry === null) return void (process.exitCode = EXIT_USAGE);
      if (!entry?.image) {
        process.stderr.write(
          `toolcell tenant image build: ${entry ? `tenant ${name} has no image (toolcell tenant image set ${name} DOCKERFILE)` : `no tenant ${JSON.stringify(name)}`}\n`,
        );
        return void (process.exitCode = EXIT_USAGE);
      }
      const path = entry.image.dockerfile;
      const tag = await buildWithProgress(
        'toolcell tenant image build',
        async (onProgress, signal) => {
          const dockerfile = await readFile(path, 'utf8');
          const [{ ensureSandboxImage }, { ensureCustomImage }] = await Promise.all([
            import('../../backends/docker/ensure-image.js'),
            import('../../backends/docker/custom-image.js'),
          ]);
          const base = await ensureSandboxImage({ build: true, onProgress, signal });
          return ensureCustomImage({ base, dockerfile, build: true, onProgress, signal });
        },
        options.verbose === true,
      );
      if (tag === undefined) return;
      process.stdout.write(`${tag}\n`);
      process.exitCode = EXIT_OK;
    });
}

async function run(command: string, body: () => Promise<void>): Promise<number> {
  try {
    await body();
    return EXIT_OK;
  } catch (error) {
    process.stderr.write(`toolcell tenant image ${command}: ${errorMessage(error)}\n`);
    return error instanceof UsageError || isToolcellError(error) ? EXIT_USAGE : EXIT_FAILURE;
  }
}
