import type Docker from 'dockerode';
import { sessionSlug } from './docker-session.js';
import { LABELS } from './labels.js';

/** The part of the engine's stats answer read here (cgroup v1 and v2 name the page cache differently). */
interface MemoryStats {
  memory_stats?: { usage?: number; stats?: { total_inactive_file?: number; inactive_file?: number } };
}

/** How long one container's stats may take; a container that does not answer in time shows no number. */
const STATS_TIMEOUT_MS = 5000;

/**
 * The memory each running sandbox container of this process uses now, by
 * the id of the shell session that holds it: the engine's one-shot stats,
 * less the inactive page cache, as `docker stats` shows it (a container that
 * wrote a large file would otherwise look as large as its cache). A
 * container that does not answer is left out; never throws for one.
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
      const bytes = await memoryOf(docker, info.Id);
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

async function memoryOf(docker: Docker, id: string): Promise<number | undefined> {
  try {
    // one-shot (API 1.41+): the numbers now, without waiting a second for a second CPU sample.
    const stats = (await docker.getContainer(id).stats({ stream: false, 'one-shot': true, abortSignal: AbortSignal.timeout(STATS_TIMEOUT_MS) } as {
      stream: false;
    })) as MemoryStats;
    const usage = stats.memory_stats?.usage;
    if (typeof usage !== 'number') return undefined;
    const inactive = stats.memory_stats?.stats?.total_inactive_file ?? stats.memory_stats?.stats?.inactive_file ?? 0;
    return inactive < usage ? usage - inactive : usage;
  } catch {
    return undefined;
  }
}
