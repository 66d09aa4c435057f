/**
 * The hardened Docker sandbox: the `ShellBackend` that runs shell commands in
 * per-session containers under an in-container supervisor, the image recipe's
 * build and status, and the engine probe that `--sandbox auto` relies on.
 */
export { createDockerBackend, type DockerShellBackend } from './docker-backend.js';
export {
  DEFAULT_LIMITS,
  resolveDockerBackendOptions,
  type DockerBackendOptions,
  type SandboxHardening,
  type SandboxLimits,
  type SandboxUserPolicy,
} from './options.js';
export { probeDocker, type DockerProbe } from './probe.js';
export {
  OFFLINE_BASE_IMAGE,
  REGISTRY_BASE_IMAGE,
  SANDBOX_IMAGE_REPOSITORY,
  sandboxImageStatus,
  sandboxImageTag,
  sandboxRecipeHash,
  type SandboxImageStatus,
} from './image.js';
export { buildSandboxImage, type BuildSandboxImageOptions, type BuildSandboxImageResult } from './build.js';
export { ensureSandboxImage, missingImageMessage, type EnsureSandboxImageOptions } from './ensure-image.js';
export { removeLeftoverContainers, type CleanupResult } from './cleanup.js';
export { LABELS } from './labels.js';
export { SANDBOX_GID, SANDBOX_PATHS, SANDBOX_UID } from './sandbox-paths.js';
export type { EngineOptions } from './engine.js';
export type { DiskCap, DiskUsage } from './disk-cap/disk-cap.js';
export { createLoopImageCap, type LoopImageCapOptions } from './disk-cap/loop-image.js';
