import { ToolcellError, ToolErrorType } from '../../errors.js';
import { buildSandboxImage } from './build.js';
import type { BuildProgressEvent } from './build-progress.js';
import type { EngineOptions } from './engine.js';
import { imageExists, sandboxImageStatus, sandboxImageTag } from './image.js';

/** Options of `ensureSandboxImage`. */
export interface EnsureSandboxImageOptions extends EngineOptions {
  /** The image to check. Default: the current recipe's tag. */
  image?: string;
  /** Build the recipe's image when it is missing (instead of throwing). Default false. */
  build?: boolean;
  /** Build progress (see build-progress.ts). */
  onProgress?: (event: BuildProgressEvent) => void;
  /** Cancels a build under way. */
  signal?: AbortSignal;
}

/** The message shown when the image is missing: what to run, and whether an older image exists. */
export function missingImageMessage(tag: string, stale: readonly string[] = []): string {
  const older = stale.length > 0 ? ` (${stale.join(', ')} is from an older recipe)` : '';
  return `The sandbox image ${tag} is not built${older}: run \`toolcell sandbox build\` (about a minute; it builds from Debian packages when no registry answers).`;
}

/**
 * Makes sure the sandbox image exists and returns its reference. Missing:
 * builds it when `build` is true, else throws `sandbox_image_missing` with the
 * command to run. A dead engine throws `sandbox_unavailable`.
 */
export async function ensureSandboxImage(options: EnsureSandboxImageOptions = {}): Promise<string> {
  const engine: EngineOptions = options.socketPath ? { socketPath: options.socketPath } : {};
  if (options.image !== undefined) {
    if (await imageExists(engine, options.image)) return options.image;
    throw new ToolcellError(ToolErrorType.SANDBOX_IMAGE_MISSING, `The sandbox image ${options.image} does not exist in the Docker engine.`);
  }
  const tag = sandboxImageTag();
  if (await imageExists(engine, tag)) return tag;
  if (options.build) {
    options.onProgress?.({
      type: 'phase',
      phase: 'image',
      message: `${tag} is not built yet: building it now, once for this version of toolcell (about a minute)`,
    });
    const built = await buildSandboxImage({
      ...engine,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return built.tag;
  }
  const status = await sandboxImageStatus(engine);
  throw new ToolcellError(ToolErrorType.SANDBOX_IMAGE_MISSING, missingImageMessage(tag, status.stale));
}
