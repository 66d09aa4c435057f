import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { MAX_DOCKERFILE_BYTES } from '../../backends/docker/custom-image.js';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import type { ShellServiceOptions } from '../../shell/shell-service.js';

/** A tenant's own sandbox image, as its resources are made with it. */
export interface TenantImage {
  /** The Dockerfile's text. */
  dockerfile: string;
  /** Part of the resources' key: a changed file means new resources on the new image. */
  key: string;
}

/** Reads the Dockerfile a tenant's `image` names (the operator's file); `sandbox_image_missing` when it cannot be read. */
export async function readTenantImage(tenant: string, path: string | undefined): Promise<TenantImage | undefined> {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ToolcellError(
      ToolErrorType.SANDBOX_IMAGE_MISSING,
      `The Dockerfile of tenant ${tenant}'s image, ${path}, cannot be read: ${(error as Error).message}`,
    );
  }
  if (Buffer.byteLength(text) > MAX_DOCKERFILE_BYTES)
    throw new ToolcellError(ToolErrorType.SANDBOX_IMAGE_MISSING, `${path} is larger than ${MAX_DOCKERFILE_BYTES} bytes.`);
  return { dockerfile: text, key: createHash('sha256').update(text).digest('hex').slice(0, 12) };
}

/**
 * Shell service options that run the tenant's image: built by the operator
 * (`toolcell tenant image build NAME`), never by the server, which refuses
 * the tenant's commands with `sandbox_image_missing` until it is.
 */
export function withTenantImage(options: ShellServiceOptions, tenant: string, image: TenantImage): ShellServiceOptions {
  return {
    ...options,
    docker: {
      ...(options.docker as Record<string, unknown> | undefined),
      dockerfile: image.dockerfile,
      buildDockerfile: false,
      dockerfileBuildHint: `the operator builds it with \`toolcell tenant image build ${tenant}\``,
    },
  };
}
