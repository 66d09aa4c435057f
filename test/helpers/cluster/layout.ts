/**
 * Where the test cluster's pieces live. Everything the harness makes carries
 * one name prefix, so that a cleanup finds it all again after a crash:
 *   network namespaces  <prefix>-hub, <prefix>-n1…        (ip netns)
 *   bridge              <prefix>-br0 in the hub namespace
 *   veths               <prefix>-h1… in the hub namespace, eth0 in each node's
 *   cgroups             /<prefix>-n1… in every hierarchy  (dockerd, containerd, shims, containers)
 *   files               /var/lib/<prefix>/               (data roots, each node's /run, logs, images)
 * Addresses are in ranges of the namespaces only (the machine's own
 * routes never see them): the hub 10.213.0.0/24, the nodes' docker0
 * 10.213.101-109.0/24, their local networks 10.214.0.0/16, the Swarm's
 * overlays 10.216.0.0/16.
 */
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, from dist/test/helpers/cluster/ or test/helpers/cluster/. */
const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = here.includes(`${sep}dist${sep}test${sep}`) ? join(here, '..', '..', '..', '..') : join(here, '..', '..', '..');

export const CLUSTER_PREFIX = 'tcsw';
export const STATE_ROOT = `/var/lib/${CLUSTER_PREFIX}`;
export const HUB_NETNS = `${CLUSTER_PREFIX}-hub`;
export const HUB_BRIDGE = `${CLUSTER_PREFIX}-br0`;
export const HUB_ADDRESS = '10.213.0.1';
export const LOCAL_POOL = '10.214.0.0/16';
export const SWARM_POOL = '10.216.0.0/16';
/** Where the machine's own engine would look for data; a node's never goes there. */
export const NODE_TOOLCELL_DIR = '/var/lib/toolcell';

/** One engine of the test cluster, a machine of its own as far as Docker can tell. */
export interface ClusterNode {
  /** n1, n2, … */
  name: string;
  /** 1, 2, … */
  index: number;
  /** The node's hostname, as Swarm shows it: `<prefix>-n1`. */
  hostname: string;
  netns: string;
  /** Its address on the hub bridge. */
  address: string;
  /** Its state folder: data root, /run, toolcell data, log. */
  dir: string;
  /** Its engine's socket, as seen from the machine. */
  socket: string;
  /** The hub-side end of its veth. */
  veth: string;
}

export function clusterNode(index: number): ClusterNode {
  if (!Number.isInteger(index) || index < 1 || index > 9) throw new RangeError(`node index must be 1-9, got ${index}`);
  const name = `n${index}`;
  const dir = join(STATE_ROOT, name);
  return {
    name,
    index,
    hostname: `${CLUSTER_PREFIX}-${name}`,
    netns: `${CLUSTER_PREFIX}-${name}`,
    address: `10.213.0.${10 + index}`,
    dir,
    socket: join(dir, 'run', 'docker.sock'),
    veth: `${CLUSTER_PREFIX}-h${index}`,
  };
}
