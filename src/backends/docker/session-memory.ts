import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { sessionSlug } from './docker-session.js';
import { LABELS } from './labels.js';
import { processCgroup } from './process-cgroup.js';

/** The part of the engine's stats answer read here (cgroup v1 and v2 name the page cache differently). */
interface MemoryStats {
  memory_stats?: { usage?: number; stats?: { total_inactive_file?: number; inactive_file?: number } };
}

/** How long one container's figures may take; a container that does not answer in time shows no number. */
const TIMEOUT_MS = 5000;

/**
 * The memory each running sandbox container of this process uses now, by
 * the id of the shell session that holds it, less the inactive page cache,
 * as `docker stats` shows it (a container that wrote a large file would
 * otherwise look as large as its cache). Read from the container's memory
 * cgroup on this host; where that cannot be read (toolcell in a container
 * of its own, without the host's /proc), from the engine's stats, which
 * engine 20.10 here sometimes answers with zeros for every new container.
 * A container with neither is left out; never throws for one.
 */
export async function sessionMemory(docker: Docker, sessionIds: readonly string[]): Promise<Map<string, number>> {
  const bySlug = new Map(sessionIds.map((id) => [sessionSlug(id), id]));
  const containers = await docker.listContainers({
    filters: { label: [`${LABELS.sandbox}=1`, `${LABELS.ownerPid}=${process.pid}`], status: ['running'] },
  });
  const found = new Map<string, number>();
  await Promise.all(
    containers.map(async (info) => {
      const session = sessionOf(info, bySlug);
      if (session === undefined) return;
      const bytes = (await cgroupMemoryOf(docker, info.Id)) ?? (await engineMemoryOf(docker, info.Id));
      if (bytes !== undefined) found.set(session, bytes);
    }),
  );
  return found;
}

/**
 * Whose container this is: its session label, or, for a pre-started spare
 * a session adopted (labels cannot change), the name it was given then,
 * `toolcell-<session slug>-<id>`.
 */
function sessionOf(info: Docker.ContainerInfo, bySlug: Map<string, string>): string | undefined {
  const labelled = info.Labels?.[LABELS.session];
  if (labelled !== undefined && bySlug.has(sessionSlug(labelled))) return bySlug.get(sessionSlug(labelled));
  for (const name of info.Names ?? []) {
    const slug = /^\/toolcell-(.+)-[0-9a-f]{12}$/.exec(name)?.[1];
    if (slug !== undefined && bySlug.has(slug)) return bySlug.get(slug);
  }
  return undefined;
}

/** From the memory cgroup of the container's first process (v1 `memory.usage_in_bytes`, v2 `memory.current`). */
async function cgroupMemoryOf(docker: Docker, id: string): Promise<number | undefined> {
  try {
    const inspected = await docker.getContainer(id).inspect({ abortSignal: AbortSignal.timeout(TIMEOUT_MS) } as object);
    const pid = inspected.State?.Pid;
    if (!pid) return undefined;
    const cgroup = await processCgroup(pid, 'memory');
    if (cgroup === undefined) return undefined;
    if (cgroup.v1) {
      const dir = join('/sys/fs/cgroup/memory', cgroup.path);
      return withoutCache(await readNumber(join(dir, 'memory.usage_in_bytes')), await readStat(dir, 'total_inactive_file'));
    }
    const dir = join('/sys/fs/cgroup', cgroup.path);
    return withoutCache(await readNumber(join(dir, 'memory.current')), await readStat(dir, 'inactive_file'));
  } catch {
    return undefined;
  }
}

async function engineMemoryOf(docker: Docker, id: string): Promise<number | undefined> {
  try {
    // one-shot (API 1.41+): the numbers now, without waiting a second for a second CPU sample.
    const stats = (await docker.getContainer(id).stats({ stream: false, 'one-shot': true, abortSignal: AbortSignal.timeout(TIMEOUT_MS) } as {
      stream: false;
    })) as MemoryStats;
    const usage = stats.memory_stats?.usage;
    // An answer without a sample (the engine's zeros) is no figure, not 0 bytes.
    if (typeof usage !== 'number' || usage <= 0) return undefined;
    return withoutCache(usage, stats.memory_stats?.stats?.total_inactive_file ?? stats.memory_stats?.stats?.inactive_file);
  } catch {
    return undefined;
  }
}

function withoutCache(usage: number | undefined, inactive: number | undefined): number | undefined {
  if (usage === undefined || usage <= 0) return undefined;
  return inactive !== undefined && inactive < usage ? usage - inactive : usage;
}

async function readNumber(path: string): Promise<number | undefined> {
  const value = Number((await readFile(path, 'utf8')).trim());
  return Number.isSafeInteger(value) ? value : undefined;
}

/** One field of a cgroup's `memory.stat`. */
async function readStat(dir: string, field: string): Promise<number | undefined> {
  const stat = await readFile(join(dir, 'memory.stat'), 'utf8').catch(() => '');
  const value = Number(new RegExp(`^${field} (\\d+)$`, 'm').exec(stat)?.[1]);
  return Number.isSafeInteger(value) ? value : undefined;
}
