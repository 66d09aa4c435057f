import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import { followProgress } from './build.js';
import type { BuildProgressEvent } from './build-progress.js';
import { createEngineClient, engineCall, type EngineOptions } from './engine.js';

/** Repository of images built from a workspace's or a tenant's Dockerfile; the tag hashes the base image and the file. */
export const CUSTOM_IMAGE_REPOSITORY = 'toolcell-custom';
/** The build argument naming toolcell's image: a custom Dockerfile starts `ARG TOOLCELL_SANDBOX_IMAGE` then `FROM ${TOOLCELL_SANDBOX_IMAGE}`. */
export const BASE_IMAGE_ARG = 'TOOLCELL_SANDBOX_IMAGE';
/** Largest Dockerfile accepted. */
export const MAX_DOCKERFILE_BYTES = 64 * 1024;

const BUILD_FAILED = ToolErrorType.SANDBOX_BUILD_FAILED;
/** Where toolcell's image keeps the supervisor (SUPERVISOR_PATH is inside). */
const SUPERVISOR_DIR = '/opt/toolcell';

export interface CustomImageOptions extends EngineOptions {
  /** toolcell's image the Dockerfile builds on (its tag). */
  base: string;
  /** The Dockerfile's text. */
  dockerfile: string;
  /** Build it when missing; otherwise a missing image throws `sandbox_image_missing` naming `howToBuild`. */
  build?: boolean;
  /** Said in the error when the image is missing and not built here (e.g. `toolcell tenant image build acme`). */
  howToBuild?: string;
  onProgress?: (event: BuildProgressEvent) => void;
  signal?: AbortSignal;
}

interface ImageFacts {
  Id: string;
  RootFS?: { Layers?: string[] };
  Config?: { Volumes?: Record<string, unknown> | null };
}

/** `toolcell-custom:<12 hex>` of a SHA-256 over the base image's id and the Dockerfile: a change to either is a new image. */
export function customImageTag(baseId: string, dockerfile: string): string {
  return `${CUSTOM_IMAGE_REPOSITORY}:${createHash('sha256').update(baseId).update('\0').update(dockerfile).digest('hex').slice(0, 12)}`;
}

/**
 * Makes sure the image of a custom Dockerfile exists and returns its tag.
 * The Dockerfile is built with no context (COPY and ADD have nothing to take:
 * files a sandboxed command could change never go into an image), FROM
 * toolcell's image, which is local, so no registry is needed unless the
 * Dockerfile's own steps fetch something. toolcell then adds a last stage of
 * its own: the supervisor folder copied back from toolcell's image (a
 * Dockerfile that replaced or removed it changes nothing), USER root,
 * ENTRYPOINT and HEALTHCHECK reset. It refuses a Dockerfile whose result is
 * not built on toolcell's image, or that declares a VOLUME (a writable place
 * outside the read-only root, with no size limit). The container's hardening
 * is set at its creation and never comes from the image (hardening.ts).
 */
export async function ensureCustomImage(options: CustomImageOptions): Promise<string> {
  if (Buffer.byteLength(options.dockerfile) > MAX_DOCKERFILE_BYTES)
    throw new ToolcellError(BUILD_FAILED, `The sandbox Dockerfile is larger than ${MAX_DOCKERFILE_BYTES} bytes.`);
  const engine: EngineOptions = options.socketPath ? { socketPath: options.socketPath } : {};
  const docker = createEngineClient(engine);
  const base = (await engineCall(engine, () => docker.getImage(options.base).inspect())) as ImageFacts;
  const tag = customImageTag(base.Id, options.dockerfile);
  if (await exists(engine, tag)) return tag;
  if (!options.build) {
    throw new ToolcellError(
      ToolErrorType.SANDBOX_IMAGE_MISSING,
      `The sandbox image ${tag} (from a custom Dockerfile) is not built${options.howToBuild ? `: ${options.howToBuild}` : ''}.`,
    );
  }
  const report = options.onProgress ?? (() => {});
  const started = Date.now();
  const stage = `${CUSTOM_IMAGE_REPOSITORY}-stage:${tag.split(':')[1]}`;
  report({ type: 'phase', phase: 'image', message: `building ${tag} from the custom Dockerfile, FROM ${options.base}` });
  await buildFromText(options, stage, options.dockerfile, { [BASE_IMAGE_ARG]: options.base });
  try {
    const built = (await engineCall(engine, () => docker.getImage(stage).inspect())) as ImageFacts;
    const baseLayers = base.RootFS?.Layers ?? [];
    const layers = built.RootFS?.Layers ?? [];
    if (baseLayers.length === 0 || !baseLayers.every((layer, index) => layers[index] === layer)) {
      throw new ToolcellError(
        BUILD_FAILED,
        `The custom Dockerfile must build FROM toolcell's image: start it with \`ARG ${BASE_IMAGE_ARG}\` and \`FROM \${${BASE_IMAGE_ARG}}\`.`,
      );
    }
    const volumes = Object.keys(built.Config?.Volumes ?? {});
    if (volumes.length > 0) {
      throw new ToolcellError(
        BUILD_FAILED,
        `The custom Dockerfile declares VOLUME ${volumes.join(', ')}: a volume would be writable storage outside the sandbox's read-only root and its limits; remove it.`,
      );
    }
    report({ type: 'phase', phase: 'image', message: `restoring toolcell's supervisor and entry point over it` });
    const last = [
      `FROM ${stage}`,
      'USER root',
      `RUN rm -rf ${SUPERVISOR_DIR}`,
      `COPY --from=${options.base} ${SUPERVISOR_DIR} ${SUPERVISOR_DIR}`,
      'ENTRYPOINT []',
      'HEALTHCHECK NONE',
      'WORKDIR /workspace',
      'LABEL dev.toolcell.image="custom"',
      '',
    ].join('\n');
    await buildFromText(options, tag, last, {});
  } finally {
    // The stage's layers stay (the image is built on them); only its name goes.
    await engineCall(engine, () => docker.getImage(stage).remove({ noprune: true })).catch(() => undefined);
  }
  const size = ((await engineCall(engine, () => docker.getImage(tag).inspect())) as { Size: number }).Size;
  report({ type: 'done', tag, sizeBytes: size, durationMs: Date.now() - started });
  return tag;
}

async function exists(engine: EngineOptions, reference: string): Promise<boolean> {
  try {
    await engineCall(engine, () => createEngineClient(engine).getImage(reference).inspect());
    return true;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return false;
    throw error;
  }
}

/** Builds a Dockerfile given as text, alone in its context, with the classic builder. */
async function buildFromText(options: CustomImageOptions, tag: string, text: string, buildargs: Record<string, string>): Promise<void> {
  const engine: EngineOptions = options.socketPath ? { socketPath: options.socketPath } : {};
  const docker = createEngineClient(engine);
  const context = await mkdtemp(join(tmpdir(), 'toolcell-custom-image-'));
  try {
    await writeFile(join(context, 'Dockerfile'), text);
    const stream = await engineCall(engine, () => docker.buildImage({ context, src: ['Dockerfile'] }, { t: tag, buildargs, rm: true, forcerm: true }));
    await followProgress(docker, stream, options.onProgress ?? (() => {}), options.signal);
  } catch (error) {
    if (error instanceof ToolcellError) throw error;
    throw new ToolcellError(BUILD_FAILED, `building ${tag} failed: ${(error as Error).message}`, { cause: error });
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}
