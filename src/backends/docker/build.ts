import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { z } from 'zod';
import { functionOption, parseOptions } from '../../contracts/parse-options.js';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import { BuildOutputSplitter, type BuildProgressEvent } from './build-progress.js';
import { createEngineClient, engineCall, engineUnavailableError, type EngineOptions } from './engine.js';
import { OFFLINE_BASE_IMAGE, REGISTRY_BASE_IMAGE, imageExists, sandboxImageTag, sandboxRecipeDir, sandboxRecipeFiles, sandboxRecipeHash } from './image.js';
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
  /** Progress: phases, Dockerfile steps, output lines (see build-progress.ts for renderers). */
  onProgress?: (event: BuildProgressEvent) => void;
  /** Stops the build: the base script's processes are killed and the engine's build stream closed (the classic builder then cancels). */
  signal?: AbortSignal;
}

/** What was built. */
export interface BuildSandboxImageResult {
  tag: string;
  base: string;
  /** The image's size as the engine reports it. */
  sizeBytes: number;
  /** Wall time of the whole build, base included. */
  durationMs: number;
}

const PULL_TIMEOUT_MS = 60_000;
const BUILD_FAILED = ToolErrorType.SANDBOX_BUILD_FAILED;

type Report = (event: BuildProgressEvent) => void;

function cancelledError(): ToolcellError {
  return new ToolcellError(ToolErrorType.CANCELLED, 'The sandbox image build was cancelled.');
}

/**
 * Follows a build/pull progress stream; rejects on an `error` event. An
 * abort destroys the stream: the engine sees the client go and stops.
 */
export function followProgress(docker: Docker, stream: NodeJS.ReadableStream, report: Report, signal?: AbortSignal): Promise<void> {
  const splitter = new BuildOutputSplitter(report);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      (stream as { destroy?: () => void }).destroy?.();
      reject(cancelledError());
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    docker.modem.followProgress(
      stream,
      (error: Error | null, events: Array<{ error?: string }>) => {
        signal?.removeEventListener('abort', onAbort);
        splitter.end();
        const failed = events?.find((event) => event.error);
        if (error) reject(error);
        else if (failed?.error) reject(new Error(failed.error));
        else resolve();
      },
      (event: { stream?: string; status?: string; progress?: string; id?: string; error?: string }) => {
        if (event.stream) splitter.write(event.stream);
        else if (event.status) splitter.write(`${event.id ? `${event.id}: ` : ''}${event.status}${event.progress ? ` ${event.progress}` : ''}\n`);
      },
    );
  });
}

/**
 * Runs sandbox/build-base.sh, streaming its output. With a signal, the script
 * gets a process group of its own so an abort can kill debootstrap's
 * children too; without one it stays in ours, so a terminal's Ctrl+C reaches
 * it as it reaches us.
 */
function runBuildBase(options: BuildSandboxImageOptions, report: Report): Promise<void> {
  const script = join(sandboxRecipeDir(), 'build-base.sh');
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLCELL_BASE_TAG: OFFLINE_BASE_IMAGE };
  if (options.socketPath) env['DOCKER_HOST'] = `unix://${options.socketPath}`;
  const splitter = new BuildOutputSplitter(report);
  const { signal } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelledError());
    const child = spawn('sh', [script], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: signal !== undefined });
    const onAbort = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    let tail = '';
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      tail = (tail + text).slice(-2000);
      splitter.write(text);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (error) => reject(new ToolcellError(BUILD_FAILED, `cannot run ${script}: ${error.message}`)));
    child.on('close', (code) => {
      signal?.removeEventListener('abort', onAbort);
      splitter.end();
      if (signal?.aborted) reject(cancelledError());
      else if (code === 0) resolve();
      else {
        const last = tail.trim().split('\n').slice(-1)[0] ?? '';
        reject(new ToolcellError(BUILD_FAILED, `building the offline base failed (exit ${code}): ${last}`));
      }
    });
  });
}

async function tryPull(docker: Docker, reference: string, report: Report, signal?: AbortSignal): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let stream: NodeJS.ReadableStream | undefined;
  try {
    const pulled = (async () => {
      stream = (await docker.pull(reference)) as NodeJS.ReadableStream;
      await followProgress(docker, stream, report, signal);
    })();
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${PULL_TIMEOUT_MS / 1000} s`)), PULL_TIMEOUT_MS);
    });
    await Promise.race([pulled, timeout]);
    return true;
  } catch (error) {
    if (signal?.aborted) throw cancelledError();
    report({ type: 'output', line: `cannot pull ${reference}: ${(error as Error).message}` });
    (stream as { destroy?: () => void } | undefined)?.destroy?.();
    return false;
  } finally {
    clearTimeout(timer);
  }
}

async function chooseBase(docker: Docker, options: BuildSandboxImageOptions, report: Report): Promise<string> {
  if (options.base !== undefined) return options.base;
  const offlineReady = !options.rebuildBase && (await imageExists(options, OFFLINE_BASE_IMAGE));
  const buildBase = async (message: string): Promise<string> => {
    report({ type: 'phase', phase: 'base', message });
    await runBuildBase(options, report);
    return OFFLINE_BASE_IMAGE;
  };
  if (options.offline) {
    return offlineReady ? OFFLINE_BASE_IMAGE : buildBase(`building the base ${OFFLINE_BASE_IMAGE} from Debian packages (debootstrap, about a minute)`);
  }
  if (await imageExists(options, REGISTRY_BASE_IMAGE)) return REGISTRY_BASE_IMAGE;
  if (offlineReady) return OFFLINE_BASE_IMAGE;
  report({ type: 'phase', phase: 'pull', message: `pulling the base ${REGISTRY_BASE_IMAGE}` });
  if (await tryPull(docker, REGISTRY_BASE_IMAGE, report, options.signal)) return REGISTRY_BASE_IMAGE;
  return buildBase(`no registry: building the base ${OFFLINE_BASE_IMAGE} from Debian packages instead (debootstrap, about a minute)`);
}

/** Checks BuildSandboxImageOptions (the interface above says what each does). */
const buildSandboxImageOptionsSchema = z
  .strictObject({
    socketPath: z.string().min(1).optional(),
    base: z.string().min(1).optional(),
    offline: z.boolean().optional(),
    rebuildBase: z.boolean().optional(),
    onProgress: functionOption<(event: BuildProgressEvent) => void>().optional(),
    signal: z.instanceof(AbortSignal, { error: 'must be an AbortSignal' }).optional(),
  })
  .refine((options) => options.base === undefined || !options.offline, {
    path: ['offline'],
    error: 'must not be given with options.base (they exclude each other)',
  });

/**
 * Builds `toolcell-sandbox:<hash>` from sandbox/ with the engine's classic
 * builder (no buildx needed), streaming progress. Throws `sandbox_unavailable`
 * when the engine does not answer, `sandbox_build_failed` when a step fails.
 */
export async function buildSandboxImage(raw: BuildSandboxImageOptions = {}): Promise<BuildSandboxImageResult> {
  const options = parseOptions(buildSandboxImageOptionsSchema, raw, 'buildSandboxImage');
  const started = Date.now();
  const report: Report = options.onProgress ?? (() => {});
  const probe = await probeDocker(options);
  if (!probe.available) throw engineUnavailableError(probe.reason ?? 'The Docker engine does not answer');
  const docker = createEngineClient(options);
  const base = await chooseBase(docker, options, report);
  const tag = sandboxImageTag();
  report({ type: 'phase', phase: 'image', message: `building ${tag} from ${base}` });
  try {
    const stream = await engineCall(options, () =>
      docker.buildImage(
        { context: sandboxRecipeDir(), src: sandboxRecipeFiles() },
        { t: tag, buildargs: { BASE: base }, labels: { 'dev.toolcell.recipe': sandboxRecipeHash() }, rm: true, forcerm: true },
      ),
    );
    await followProgress(docker, stream, report, options.signal);
  } catch (error) {
    if (error instanceof ToolcellError && (error.code === ToolErrorType.SANDBOX_UNAVAILABLE || error.code === ToolErrorType.CANCELLED)) throw error;
    throw new ToolcellError(BUILD_FAILED, `building ${tag} failed: ${(error as Error).message}`, { cause: error });
  }
  let sizeBytes: number;
  try {
    sizeBytes = (await engineCall(options, () => docker.getImage(tag).inspect())).Size;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) throw new ToolcellError(BUILD_FAILED, `the build finished but ${tag} is missing`);
    throw error;
  }
  const durationMs = Date.now() - started;
  report({ type: 'done', tag, sizeBytes, durationMs });
  return { tag, base, sizeBytes, durationMs };
}
