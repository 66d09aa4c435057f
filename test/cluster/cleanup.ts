/**
 * `node dist/test/cluster/cleanup.js`: removes whatever a cluster harness
 * left on this machine (after a crash or a kill -9 of `npm run test:cluster`),
 * found by its name prefix. The machine's own Docker engine is not touched.
 */
import { clusterLeftovers, removeClusterLeftovers } from '../helpers/cluster/cleanup.js';

const removed = await removeClusterLeftovers();
process.stdout.write(removed.length > 0 ? `removed: ${removed.join('; ')}\n` : 'nothing to remove\n');
const left = await clusterLeftovers();
if (left.length > 0) {
  process.stderr.write(`still there: ${left.join('; ')}\n`);
  process.exitCode = 1;
}
