import type Docker from 'dockerode';
import { removeLeftoverContainers } from './cleanup.js';
import { removeLeftoverEgressNetworks } from './egress-network.js';
import { PrivateMounts } from './private-mounts.js';

/** What `removeLeftovers` took away. */
export interface LeftoversRemoved {
  /** Ids (12 characters) of the containers removed. */
  containers: string[];
  /** Names of the egress networks removed, each with its host firewall rules. */
  networks: string[];
}

/**
 * The start-up pass after a crash: removes what toolcell processes that are
 * gone left in the engine and on the host. Their containers first (a network
 * cannot be removed while a container is on it), with the private mount
 * points their starts left; then their egress networks and the firewall
 * rules of each. `exec`'s Docker backend and a hosting server both start
 * with it; only leftovers of dead owners are touched (labels.ts).
 */
export async function removeLeftovers(docker: Docker): Promise<LeftoversRemoved> {
  const [containers] = await Promise.all([removeLeftoverContainers(docker), PrivateMounts.removeStale()]);
  const networks = await removeLeftoverEgressNetworks(docker);
  return { containers: containers.removed, networks };
}
