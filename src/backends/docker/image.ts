import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { packageRoot } from '../../paths.js';
import { createEngineClient, engineCall, type EngineOptions } from './engine.js';
import { probeDocker, type DockerProbe } from './probe.js';

/** Repository of the sandbox image; the tag is a hash of the recipe. */
export const SANDBOX_IMAGE_REPOSITORY = 'toolcell-sandbox';
/** The base the offline path builds from Debian packages. */
export const OFFLINE_BASE_IMAGE = 'toolcell-base:bookworm';
/** The Dockerfile's default base, for machines with a registry. */
export const REGISTRY_BASE_IMAGE = 'debian:bookworm-slim';

/** The recipe folder (Dockerfile, supervisor, build-base.sh). */
export function sandboxRecipeDir(): string {
  return join(packageRoot, 'sandbox');
}

/**
 * Whether a file of sandbox/ belongs to the image. Not: docs, caches, and the
 * host-side scripts at the top (build-base.sh, setup-engine.sh), which run on
 * the host and never enter the image, so editing them must not make every
 * built image stale.
 */
function isRecipeFile(path: string): boolean {
  const parts = path.split(sep);
  if (parts.length === 1 && path.endsWith('.sh')) return false;
  return !parts.includes('__pycache__') && !path.endsWith('.pyc') && !path.endsWith('.md') && !path.endsWith('.keep');
}

/** The recipe's files, relative to the recipe folder, sorted. */
export function sandboxRecipeFiles(): string[] {
  const root = sandboxRecipeDir();
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && isRecipeFile(relative(root, path))) files.push(relative(root, path));
    }
  };
  walk(root);
  return files.sort();
}

let cachedHash: string | undefined;

/** First 12 hex digits of a SHA-256 over the recipe's paths and contents. */
export function sandboxRecipeHash(): string {
  if (cachedHash === undefined) {
    const hash = createHash('sha256');
    for (const file of sandboxRecipeFiles()) {
      hash.update(file.split(sep).join('/')).update('\0');
      hash.update(readFileSync(join(sandboxRecipeDir(), file))).update('\0');
    }
    cachedHash = hash.digest('hex').slice(0, 12);
  }
  return cachedHash;
}

/** `toolcell-sandbox:<hash12>`: the image this version of the recipe builds. */
export function sandboxImageTag(): string {
  return `${SANDBOX_IMAGE_REPOSITORY}:${sandboxRecipeHash()}`;
}

/** What `toolcell sandbox status` reports. */
export interface SandboxImageStatus {
  engine: DockerProbe;
  /** The tag the current recipe builds. */
  expected: string;
  /** Whether `expected` is present in the engine. */
  present: boolean;
  /** Other `toolcell-sandbox:*` tags present: built from an older recipe. */
  stale: string[];
  /** Which bases are present locally. */
  bases: { offline: boolean; registry: boolean };
}

/** True when the engine has an image with this reference. */
export async function imageExists(options: EngineOptions, reference: string): Promise<boolean> {
  const docker = createEngineClient(options);
  try {
    await engineCall(options, () => docker.getImage(reference).inspect());
    return true;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return false;
    throw error;
  }
}

/** Engine, expected image, stale images, bases. Never throws for a dead engine. */
export async function sandboxImageStatus(options: EngineOptions = {}): Promise<SandboxImageStatus> {
  const expected = sandboxImageTag();
  const engine = await probeDocker(options);
  const status: SandboxImageStatus = { engine, expected, present: false, stale: [], bases: { offline: false, registry: false } };
  if (!engine.available) return status;
  const docker = createEngineClient(options);
  const images = await engineCall(options, () => docker.listImages());
  const tags = images.flatMap((image) => image.RepoTags ?? []);
  status.present = tags.includes(expected);
  status.stale = tags.filter((tag) => tag.startsWith(`${SANDBOX_IMAGE_REPOSITORY}:`) && tag !== expected).sort();
  status.bases = { offline: tags.includes(OFFLINE_BASE_IMAGE), registry: tags.includes(REGISTRY_BASE_IMAGE) };
  return status;
}
