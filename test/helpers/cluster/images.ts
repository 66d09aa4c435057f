/**
 * The images the cluster runs, and how they get onto its engines. No
 * registry is reachable here: each image is built on the machine's own
 * engine from its recipe folder (Debian packages on the project's offline
 * base, toolcell-base:bookworm, when it is there), tagged with a hash of
 * that folder so that a stale one is rebuilt and a current one reused, like
 * the sandbox image; then `docker save` once and `docker load` into every
 * node. These tagged images, one per recipe (an older recipe's goes when a
 * new one is built), are the only thing the harness leaves on the machine's
 * engine, as `toolcell sandbox build` leaves the sandbox's.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { OFFLINE_BASE_IMAGE, sandboxImageTag } from '../../../src/backends/docker/image.js';
import { REPO_ROOT, STATE_ROOT, type ClusterNode } from './layout.js';
import { runCommand, tryCommand } from './run-command.js';

/** An image of the cluster, by its recipe folder (relative to the repository). */
export interface ImageRecipe {
  repository: string;
  folder: string;
}

export const SWARM_IMAGES = {
  launcher: { repository: 'toolcell-swarm-launcher', folder: 'deploy/swarm/launcher' },
  etcd: { repository: 'toolcell-swarm-etcd', folder: 'deploy/swarm/etcd' },
  haproxy: { repository: 'toolcell-swarm-haproxy', folder: 'deploy/swarm/haproxy' },
  echo: { repository: 'toolcell-swarm-test-echo', folder: 'test/cluster/images/echo' },
} satisfies Record<string, ImageRecipe>;

/** What enters the image: the Dockerfile and what its COPY lines take from the folder (not the folder's other files: scripts, templates, docs). */
function recipeFiles(folder: string): string[] {
  const dockerfile = readFileSync(join(folder, 'Dockerfile'), 'utf8');
  const sources = dockerfile
    .split('\n')
    .filter((line) => /^COPY\s/i.test(line))
    .flatMap((line) =>
      line
        .trim()
        .split(/\s+/)
        .slice(1, -1)
        .filter((word) => !word.startsWith('--')),
    );
  const files: string[] = ['Dockerfile'];
  const walk = (path: string): void => {
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path).sort()) walk(join(path, entry));
    else files.push(relative(folder, path));
  };
  for (const source of sources) walk(join(folder, source));
  return files.sort();
}

function folderHash(folder: string): string {
  const hash = createHash('sha256');
  for (const file of recipeFiles(folder))
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(join(folder, file)))
      .update('\0');
  return hash.digest('hex').slice(0, 12);
}

/** `repository:<hash of its recipe>`. */
export function imageTag(recipe: ImageRecipe): string {
  return `${recipe.repository}:${folderHash(join(REPO_ROOT, recipe.folder))}`;
}

/** Builds the image on the machine's engine unless this recipe's tag is there already; returns the tag. */
export async function ensureImage(recipe: ImageRecipe): Promise<string> {
  const tag = imageTag(recipe);
  if ((await tryCommand('docker', ['image', 'inspect', '--format', '{{.Id}}', tag])).ok) return tag;
  const offline = (await tryCommand('docker', ['image', 'inspect', '--format', '{{.Id}}', OFFLINE_BASE_IMAGE])).ok;
  await runCommand('docker', ['build', '-q', ...(offline ? ['--build-arg', `BASE=${OFFLINE_BASE_IMAGE}`] : []), '-t', tag, join(REPO_ROOT, recipe.folder)], {
    timeoutMs: 600_000,
  });
  // Older recipes' images of this repository (only the harness makes it) go, so that the machine keeps one of each.
  const { stdout } = await runCommand('docker', ['image', 'ls', recipe.repository, '--format', '{{.Repository}}:{{.Tag}}']);
  for (const old of stdout.split('\n').filter((line) => line !== '' && line !== tag)) await tryCommand('docker', ['rmi', old]);
  return tag;
}

/** The current sandbox image (built by `toolcell sandbox build --offline` when missing). */
export async function ensureSandboxImage(): Promise<string> {
  const tag = sandboxImageTag();
  if ((await tryCommand('docker', ['image', 'inspect', '--format', '{{.Id}}', tag])).ok) return tag;
  await runCommand('node', [join(REPO_ROOT, 'dist', 'src', 'cli', 'bin.js'), 'sandbox', 'build', '--offline'], { timeoutMs: 900_000 });
  return tag;
}

/** Saves `tags` from the machine's engine into one archive of the state folder; returns its path. */
export async function saveImages(name: string, tags: string[]): Promise<string> {
  const dir = join(STATE_ROOT, 'images');
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${name}.tar`);
  await runCommand('docker', ['save', '-o', path, ...tags], { timeoutMs: 600_000 });
  return path;
}

/** `docker load` of an archive into one node; returns the ms it took. */
export async function loadImages(node: ClusterNode, archive: string): Promise<number> {
  const start = Date.now();
  await runCommand('docker', ['-H', `unix://${node.socket}`, 'load', '-q', '-i', archive], { timeoutMs: 600_000 });
  return Date.now() - start;
}
