/**
 * The toolcell server image of the test cluster (deploy/swarm/server/),
 * built offline from this checkout: the context holds the machine's own
 * Node binary and the package (dist/, sandbox/, the production part of
 * node_modules, found by `npm ls --omit=dev`, copied, nothing fetched).
 * Tagged with a hash of all of that, so a current image is reused and a
 * stale one rebuilt, like the other images of the harness (images.ts).
 */
import { createHash } from 'node:crypto';
import { cp, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { OFFLINE_BASE_IMAGE } from '../../../src/backends/docker/image.js';
import { REPO_ROOT, STATE_ROOT } from './layout.js';
import { runCommand, tryCommand } from './run-command.js';

export const SERVER_IMAGE_REPOSITORY = 'toolcell-swarm-server';
const RECIPE = join(REPO_ROOT, 'deploy', 'swarm', 'server');
/** What of the package enters the image, besides node_modules. */
const PACKAGE_PARTS = ['package.json', 'package-lock.json', 'dist/src', 'dist/workers', 'sandbox'];

async function filesUnder(path: string): Promise<string[]> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => undefined);
  if (entries === undefined) return [path];
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) files.push(...(await filesUnder(join(path, entry.name))));
  return files;
}

async function recipeHash(): Promise<string> {
  const hash = createHash('sha256')
    .update(process.version)
    .update('\0')
    .update(await readFile(join(RECIPE, 'Dockerfile')));
  for (const part of PACKAGE_PARTS)
    for (const file of await filesUnder(join(REPO_ROOT, part)))
      hash
        .update(relative(REPO_ROOT, file))
        .update('\0')
        .update(await readFile(file))
        .update('\0');
  return hash.digest('hex').slice(0, 12);
}

/** Builds the server image on the machine's engine unless this checkout's is there; returns its tag. */
export async function ensureServerImage(): Promise<string> {
  const tag = `${SERVER_IMAGE_REPOSITORY}:${await recipeHash()}`;
  if ((await tryCommand('docker', ['image', 'inspect', '--format', '{{.Id}}', tag])).ok) return tag;
  const context = join(STATE_ROOT, 'server-context');
  await rm(context, { recursive: true, force: true });
  await mkdir(join(context, 'toolcell'), { recursive: true });
  await cp(join(RECIPE, 'Dockerfile'), join(context, 'Dockerfile'));
  await cp(process.execPath, join(context, 'node'));
  for (const part of PACKAGE_PARTS) await cp(join(REPO_ROOT, part), join(context, 'toolcell', part), { recursive: true });
  // The production dependencies only: each folder npm lists, unless a listed folder holds it already.
  const { stdout } = await runCommand('npm', ['ls', '--prefix', REPO_ROOT, '--omit=dev', '--all', '--parseable'], { timeoutMs: 120_000 }).catch(
    (error: Error & { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
  );
  const folders = [...new Set(stdout.split('\n').filter((line) => line.startsWith(join(REPO_ROOT, 'node_modules'))))].sort();
  let last = '';
  for (const folder of folders) {
    if (last !== '' && folder.startsWith(`${last}/`)) continue;
    last = folder;
    await cp(folder, join(context, 'toolcell', relative(REPO_ROOT, folder)), { recursive: true, verbatimSymlinks: true });
  }
  const offline = (await tryCommand('docker', ['image', 'inspect', '--format', '{{.Id}}', OFFLINE_BASE_IMAGE])).ok;
  await runCommand('docker', ['build', '-q', ...(offline ? ['--build-arg', `BASE=${OFFLINE_BASE_IMAGE}`] : []), '-t', tag, context], { timeoutMs: 900_000 });
  await rm(context, { recursive: true, force: true });
  const { stdout: tags } = await runCommand('docker', ['image', 'ls', SERVER_IMAGE_REPOSITORY, '--format', '{{.Repository}}:{{.Tag}}']);
  for (const old of tags.split('\n').filter((line) => line !== '' && line !== tag)) await tryCommand('docker', ['rmi', old]);
  return tag;
}
