import type { Settings } from '../config/settings-schema.js';
import { shellServiceOptions } from '../runtime/shell-settings.js';
import type { ShellServiceOptions } from '../shell/shell-service.js';
import { withoutOperatorEgress } from './tenant-network.js';

/**
 * Past what a command's output can still be used for, bytes per second a
 * tenant's container reads from it (ShellServiceOptions.drainBytesPerSecond).
 * A 1 GB flood through a terminal otherwise keeps the kernel's terminal
 * work busy for half a minute on CPU that no tenant's limit accounts for
 * (bench/hosting, noisy neighbour); at this rate it costs the host next to
 * nothing, and an output too long to show takes 8 s more per 64 MB.
 */
export const HOSTING_DRAIN_BYTES_PER_SECOND = 8 * 1024 * 1024;

/**
 * The operator's shell settings as a server shared by tenants runs them:
 * without the operator's `sandbox.network` (the tenants file alone decides
 * what a tenant reaches) and with floods drained slowly.
 */
export function hostingShellOptions(settings: Settings): ShellServiceOptions {
  return { ...withoutOperatorEgress(shellServiceOptions(settings)), drainBytesPerSecond: HOSTING_DRAIN_BYTES_PER_SECOND };
}
