import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { ToolcellError, ToolErrorType } from '../errors.js';
import { createEngineClient, engineCall, engineUnavailableError, type EngineOptions } from './engine.js';
import {
  OFFLINE_BASE_IMAGE,
  REGISTRY_BASE_IMAGE,
  imageExists,
  sandboxImageTag,
  sandboxRecipeDir,
  sandboxRecipeFiles,
  sandboxRecipeHash,
} from './image.js';
import { probeDocker } from './probe.js';

/** Options of `buildSandboxImage`. */
export interface BuildSandboxImageOptions extends EngineOptions {
  /**
   * Base image. Default: `debian:bookworm-slim` when present locally, else a
   * local `toolcell-base:bookworm`, else a pull of `debian:bookworm-slim`,
   * and when no registry answers, the offline path.
   */
  base?: string;
  /** Build the base from Debian packages (debootstrap + docker import) unless it exists. */
  offline?: boolean;
  /** Rebuild the offline base even when it exists. */
  rebuildBase?: boolean;
  /** One line of progress at a time (build steps, debootstrap output). */
  onProgress?: (line: string) => void;
}

/** What was built. */
export interface BuildSandboxImageResult {
  tag: string;
  base: string;
}

const PULL_TIMEOUT_MS = 60_000;
const BUILD_FAILED = 'sandbox_build_failed';

function lines(onProgress: ((line: string) => void) | undefined): (text: string) => void {
  let pending = '';
  return (text: string) => {
    pending += text;
    const parts = pending.split(/\r?\n/);
    pending = parts.pop() ?? '';
    for (const part of parts) if (part.trim()) onProgress?.(part);
  };
}

/** Follows a build/pull progress stream; rejects on an `error` event. */
function followProgress(docker: Docker, stream: NodeJS.ReadableStream, onProgress?: (line: string) => void): Promise<void> {
  const emit = lines(onProgress);
  return new Promise((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (error: Error | null, events: Array<{ error?: string }>) => {
        const failed = events?.find((event) => event.error);
        if (error) reject(error);
        else if (failed?.error) reject(new Error(failed.error));
        else resolve();
      },
      (event: { stream?: string; status?: string; progress?: string; id?: string; error?: string }) => {
        if (event.stream) emit(event.stream);
        else if (event.status) emit(`${event.id ? `${event.id}: ` : ''}${event.status}${event.progress ? ` ${event.progress}` : ''}\n`);
      },
    );
  });
}

/** Runs sandbox/build-base.sh, streaming its output. */
function runBuildBase(options: BuildSandboxImageOptions): Promise<void> {
  const script = join(sandboxRecipeDir(), 'build-base.sh');
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLCELL_BASE_TAG: OFFLINE_BASE_IMAGE };
  if (options.socketPath) env['DOCKER_HOST'] = `unix://${options.socketPath}`;
  const emit = lines(options.onProgress);
  return new Promise((resolve, reject) => {
    const child = spawn('sh', [script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      tail = (tail + text).slice(-2000);
      emit(text);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (error) => reject(new ToolcellError(BUILD_FAILED, `cannot run ${script}: ${error.message}`)));
    child.on('close', (code) => {
      emit('\n');
      if (code === 0) resolve();
      else {
        const last = tail.trim().split('\n').slice(-1)[0] ?? '';
        reject(new ToolcellError(BUILD_FAILED, `building the offline base failed (exit ${code}): ${last}`));
      }
    });
  });
}

async function tryPull(docker: Docker, reference: string, onProgress?: (line: string) => void): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let stream: NodeJS.ReadableStream | undefined;
  try {
    const pulled = (async () => {
      stream = (await docker.pull(reference)) as NodeJS.ReadableStream;
      await followProgress(docker, stream, onProgress);
    })();
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${PULL_TIMEOUT_MS / 1000} s`)), PULL_TIMEOUT_MS);
    });
    await Promise.race([pulled, timeout]);
    return true;
  } catch (error) {
    onProgress?.(`cannot pull ${reference}: ${(error as Error).message}`);
    (stream as { destroy?: () => void } | undefined)?.destroy?.();
    return false;
  } finally {
    clearTimeout(timer);
  }
}

async function chooseBase(docker: Docker, options: BuildSandboxImageOptions): Promise<string> {
  const say = options.onProgress;
  if (options.base !== undefined) return options.base;
  const offlineReady = !options.rebuildBase && (await imageExists(options, OFFLINE_BASE_IMAGE));
  if (options.offline) {
    if (!offlineReady) {
      say?.(`building ${OFFLINE_BASE_IMAGE} from Debian packages (debootstrap, about a minute)`);
      await runBuildBase(options);
    }
    return OFFLINE_BASE_IMAGE;
  }
  if (await imageExists(options, REGISTRY_BASE_IMAGE)) return REGISTRY_BASE_IMAGE;
  if (offlineReady) return OFFLINE_BASE_IMAGE;
  say?.(`pulling ${REGISTRY_BASE_IMAGE}`);
  if (await tryPull(docker, REGISTRY_BASE_IMAGE, say)) return REGISTRY_BASE_IMAGE;
  say?.(`no registry: building ${OFFLINE_BASE_IMAGE} from Debian packages instead (debootstrap, about a minute)`);
  await runBuildBase(options);
  return OFFLINE_BASE_IMAGE;
}

/**
 * Builds `toolcell-sandbox:<hash>` from sandbox/ with the engine's classic
 * builder (no buildx needed), streaming progress. Throws `sandbox_unavailable`
 * when the engine does not answer, `sandbox_build_failed` when a step fails.
 */
export async function buildSandboxImage(options: BuildSandboxImageOptions = {}): Promise<BuildSandboxImageResult> {
  if (options.base !== undefined && (typeof options.base !== 'string' || options.base.length === 0)) {
    throw new TypeError('options.base must be a non-empty image reference');
  }
  if (options.base !== undefined && options.offline) throw new TypeError('options.base and options.offline exclude each other');
  const probe = await probeDocker(options);
  if (!probe.available) throw engineUnavailableError(probe.reason ?? 'The Docker engine does not answer');
  const docker = createEngineClient(options);
  const base = await chooseBase(docker, options);
  const tag = sandboxImageTag();
  options.onProgress?.(`building ${tag} from ${base}`);
  try {
    const stream = await engineCall(options, () =>
      docker.buildImage(
        { context: sandboxRecipeDir(), src: sandboxRecipeFiles() },
        { t: tag, buildargs: { BASE: base }, labels: { 'dev.toolcell.recipe': sandboxRecipeHash() }, rm: true, forcerm: true },
      ),
    );
    await followProgress(docker, stream, options.onProgress);
  } catch (error) {
    if (error instanceof ToolcellError && error.code === ToolErrorType.SANDBOX_UNAVAILABLE) throw error;
    throw new ToolcellError(BUILD_FAILED, `building ${tag} failed: ${(error as Error).message}`, { cause: error });
  }
  if (!(await imageExists(options, tag))) throw new ToolcellError(BUILD_FAILED, `the build finished but ${tag} is missing`);
  return { tag, base };
}
