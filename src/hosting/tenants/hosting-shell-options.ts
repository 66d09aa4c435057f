import type { Runtime } from '../../runtime/runtime.js';
import { shellServiceOptions } from '../../runtime/shell-settings.js';
import type { ShellServiceOptions } from '../../shell/shell-service.js';
import { withoutOperatorEgress } from './tenant-network.js';

/**
 * What a server shared by tenants keeps of one command's output, and how
 * fast it reads the rest. Every byte kept crosses the engine and the one
 * shell thread all tenants share, and is rendered there by a terminal
 * emulator; none of that runs in the tenant's cgroup. What a tenant's 1 GB
 * flood costs another tenant at the local defaults (8 MiB rendered, 64 MiB
 * saved) and at these is measured by bench/hosting (noisy neighbour); the
 * figures are in docs/benchmarks.md. The model sees 40,000 characters of an
 * output either way; the saved file (`.toolcell/tool-outputs`) holds the
 * first 8 MiB.
 */
export const HOSTING_OUTPUT_LIMITS = Object.freeze({
  /** Bytes rendered per command (ShellServiceOptions.maxOutputBytes; 8 MiB locally). */
  maxOutputBytes: 1024 * 1024,
  /** A saved output's cap, unless the operator's `shell.savedOutputMaxBytes` says otherwise (64 MiB locally). */
  savedOutputMaxBytes: 8 * 1024 * 1024,
  /**
   * Past those, bytes per second a container reads from the command
   * (ShellServiceOptions.drainBytesPerSecond; unpaced locally). Unpaced, a
   * 1 GB flood through a terminal keeps the kernel's terminal work busy for
   * half a minute on CPU no tenant's limit accounts for; paced, it costs the
   * host next to nothing, and an output too long to keep takes 8 s more per
   * 64 MB.
   */
  drainBytesPerSecond: 8 * 1024 * 1024,
});

/**
 * The operator's shell settings as a server shared by tenants runs them:
 * without the operator's `sandbox.network` (the tenants file alone decides
 * what a tenant reaches), and keeping less of each output (HOSTING_OUTPUT_LIMITS).
 */
export function hostingShellOptions(runtime: Pick<Runtime, 'settings' | 'sandboxCpus'>): ShellServiceOptions {
  const { maxOutputBytes, savedOutputMaxBytes, drainBytesPerSecond } = HOSTING_OUTPUT_LIMITS;
  const operator = shellServiceOptions(runtime.settings, { cpuSet: runtime.sandboxCpus });
  return { maxOutputBytes, savedOutputMaxBytes, ...withoutOperatorEgress(operator), drainBytesPerSecond };
}
