/**
 * The OCI runtime the suite's sandboxes run on. Unset: the engine's default
 * (runc). CI runs the Docker backend's tests, test/security and the hosting
 * isolation tests a second time with TOOLCELL_TEST_RUNTIME=runsc (gVisor,
 * set up by `toolcell sandbox setup --runtime runsc`); the shared helpers
 * read it, so a test file needs no change to run under either runtime:
 * backends (docker.ts), runtimes (security.ts, hosting.ts) and the CLI
 * (cli.ts, security.ts) get it as their `runtime` / `--runtime`.
 */
import type { TestFn } from 'ava';
import { chown } from 'node:fs/promises';
import { SANDBOX_GID, SANDBOX_UID } from '../../src/backends/docker/sandbox-paths.js';
import { missingRequirement } from './missing-requirement.js';

/** The runtime named by TOOLCELL_TEST_RUNTIME, or undefined for the engine's default. */
export const TEST_RUNTIME: string | undefined = process.env['TOOLCELL_TEST_RUNTIME'] || undefined;

/** True when the suite runs its sandboxes under gVisor. */
export const UNDER_GVISOR = TEST_RUNTIME === 'runsc';

/** `{runtime}` for Docker backend options (nothing under the default runtime). */
export function testRuntimeOption(): { runtime?: string } {
  return TEST_RUNTIME !== undefined ? { runtime: TEST_RUNTIME } : {};
}

/** `{sandboxRuntime}` for createRuntime (nothing under the default runtime). */
export function testSandboxRuntime(): { sandboxRuntime?: string } {
  return TEST_RUNTIME !== undefined ? { sandboxRuntime: TEST_RUNTIME } : {};
}

/** The commands that take `--runtime`. */
const RUNTIME_COMMANDS = new Set(['exec', 'run', 'chat', 'serve']);

/** CLI arguments with `--runtime` added for the suite's runtime, where the command takes one and the test named none. */
export function withTestRuntimeArgs(args: readonly string[]): string[] {
  if (TEST_RUNTIME === undefined || !RUNTIME_COMMANDS.has(args[0] ?? '') || args.includes('--runtime') || args.includes('--help')) return [...args];
  return [...args, '--runtime', TEST_RUNTIME];
}

/**
 * Under gVisor, gives a fresh (root-owned) test workspace to an ordinary
 * user (the image's `sandbox` uid): commands run as a workspace's owner, and
 * toolcell refuses uid-0 commands under gVisor (docker-backend.ts: gVisor
 * does not keep them from init's and the supervisor's descriptors and
 * signals). Under runc, nothing changes: root keeps it, commands run as uid 0.
 */
export async function giveWorkspaceToSandboxUser(dir: string, runtime: string | undefined = TEST_RUNTIME): Promise<void> {
  if (runtime === 'runsc') await chown(dir, SANDBOX_UID, SANDBOX_GID);
}

/**
 * The `test` function for files that need gVisor registered in the engine
 * (`toolcell sandbox setup --runtime runsc`, which CI runs): `test` itself
 * when the engine has `runsc`; under CI=true otherwise one failing test that
 * says so; elsewhere every test skipped with the reason printed once.
 * Call after requireDocker.
 */
export async function requireGvisor<Context>(test: TestFn<Context>, label: string): Promise<TestFn<Context>> {
  const { readEngineRuntimes } = await import('../../src/backends/docker/runtimes.js');
  const { createEngineClient } = await import('../../src/backends/docker/engine.js');
  const runtimes = await readEngineRuntimes(createEngineClient()).catch(() => undefined);
  if (runtimes?.runtimes.get('runsc')?.gvisor) return test;
  const reason = 'the Docker engine has no runsc runtime (run `toolcell sandbox setup --runtime runsc`)';
  return missingRequirement(test, { failingTitle: `${label}: gVisor is required when CI=true`, failure: reason, reason: `${label}: skipped: ${reason}` });
}
