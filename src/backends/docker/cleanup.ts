import type Docker from 'dockerode';
import { LABELS, ownerAlive } from './labels.js';

/** What a cleanup pass did. */
export interface CleanupResult {
  /** Ids (12 characters) of the containers removed. */
  removed: string[];
  /** Sandbox containers kept because their owner is alive (or on another host). */
  kept: number;
}

/** Removes a container, treating "already gone" and "removal in progress" as done. */
export async function removeContainer(docker: Docker, id: string): Promise<void> {
  try {
    await docker.getContainer(id).remove({ force: true });
  } catch (error) {
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== 404 && status !== 409) throw error;
  }
}

/**
 * Removes sandbox containers whose owner process is dead (the start-up pass),
 * or, with `all`, every toolcell sandbox container, also those of live owners.
 * `labels` narrows the pass to containers that also carry these labels.
 */
export async function removeLeftoverContainers(docker: Docker, options: { all?: boolean; labels?: Record<string, string> } = {}): Promise<CleanupResult> {
  const filters = [`${LABELS.sandbox}=1`, ...Object.entries(options.labels ?? {}).map(([key, value]) => `${key}=${value}`)];
  const containers = await docker.listContainers({ all: true, filters: { label: filters } });
  const result: CleanupResult = { removed: [], kept: 0 };
  await Promise.all(
    containers.map(async (info) => {
      if (!options.all && ownerAlive(info.Labels ?? {})) {
        result.kept += 1;
        return;
      }
      await removeContainer(docker, info.Id);
      result.removed.push(info.Id.slice(0, 12));
    }),
  );
  return result;
}

/** Removes every container created by one backend (its `dev.toolcell.backend` label). */
export async function removeBackendContainers(docker: Docker, backendId: string): Promise<number> {
  const containers = await docker.listContainers({ all: true, filters: { label: [`${LABELS.backend}=${backendId}`] } });
  await Promise.all(containers.map((info) => removeContainer(docker, info.Id)));
  return containers.length;
}
