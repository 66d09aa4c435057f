import Docker from 'dockerode';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import { HOW_TO_GET_AN_ENGINE } from './engine-advice.js';

/** Connection settings for the Docker engine. */
export interface EngineOptions {
  /** Unix socket of the engine. Default: DOCKER_HOST (unix:// only), else /var/run/docker.sock. */
  socketPath?: string;
}

const DEFAULT_SOCKET = '/var/run/docker.sock';

/** The socket a client built from `options` talks to, for messages. */
export function engineAddress(options: EngineOptions = {}): string {
  if (options.socketPath) return `unix://${options.socketPath}`;
  return process.env['DOCKER_HOST'] || `unix://${DEFAULT_SOCKET}`;
}

/** A dockerode client for the engine. */
export function createEngineClient(options: EngineOptions = {}): Docker {
  if (options.socketPath) return new Docker({ socketPath: options.socketPath });
  return new Docker();
}

const UNREACHABLE_CODES = new Set(['ENOENT', 'ECONNREFUSED', 'EACCES', 'EPERM', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTSOCK']);

/** True when `error` says the engine cannot be reached at all (rather than refusing a request). */
export function isEngineUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNREACHABLE_CODES.has(code);
}

/** Why the engine is unreachable, in one sentence (no trailing period). */
export function unreachableReason(error: unknown, options: EngineOptions = {}): string {
  const code = (error as { code?: unknown } | null)?.code;
  const detail = typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
  return `Cannot reach the Docker engine at ${engineAddress(options)} (${detail})`;
}

/**
 * The stable `sandbox_unavailable` error: what failed and how to enable the
 * sandbox.
 */
export function engineUnavailableError(reason: string, cause?: unknown): ToolcellError {
  return new ToolcellError(
    ToolErrorType.SANDBOX_UNAVAILABLE,
    `${reason}. ${HOW_TO_GET_AN_ENGINE}, then check with \`toolcell sandbox status\`.`,
    cause === undefined ? undefined : { cause },
  );
}

/** Runs an engine request; maps "cannot connect" errors to `sandbox_unavailable`. */
export async function engineCall<T>(options: EngineOptions, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (isEngineUnreachable(error)) throw engineUnavailableError(unreachableReason(error, options), error);
    throw error;
  }
}
