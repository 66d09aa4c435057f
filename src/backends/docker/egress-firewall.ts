import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ToolcellError, ToolErrorType } from '../../errors.js';

const run = promisify(execFile);

/**
 * The host side of an egress network. Docker's `internal` flag stops traffic
 * from the bridge being forwarded anywhere, but the host's own addresses are
 * not forwarded to, they are delivered: without these rules a sandbox could
 * reach any service listening on the host (its SSH, toolcell's own server,
 * another tenant's proxy) through the gateway. So, for packets arriving on
 * the bridge: TCP to the proxy's address and port is accepted, everything
 * else (TCP, UDP with DNS, ICMP; IPv4 and IPv6) is dropped.
 */
export interface FirewallRules {
  /** The bridge interface, `tc<backend id>`. */
  bridge: string;
  gateway: string;
  proxyPort: number;
}

function ruleSpecs(rules: FirewallRules): { tool: 'iptables' | 'ip6tables'; spec: string[] }[] {
  const comment = ['-m', 'comment', '--comment', `toolcell egress ${rules.bridge}`];
  return [
    { tool: 'iptables', spec: ['INPUT', '-i', rules.bridge, ...comment, '-j', 'DROP'] },
    { tool: 'iptables', spec: ['INPUT', '-i', rules.bridge, '-p', 'tcp', '-d', rules.gateway, '--dport', String(rules.proxyPort), ...comment, '-j', 'ACCEPT'] },
    { tool: 'ip6tables', spec: ['INPUT', '-i', rules.bridge, ...comment, '-j', 'DROP'] },
  ];
}

async function iptables(tool: string, args: string[]): Promise<void> {
  // -w: wait for the xtables lock (dockerd holds it while it sets up networks).
  await run(tool, ['-w', '5', ...args], { timeout: 15_000 });
}

/** Inserts the rules at the top of INPUT (the accept above the drop). Fails closed: without them the network is not used. */
export async function installFirewall(rules: FirewallRules): Promise<void> {
  try {
    for (const { tool, spec } of ruleSpecs(rules)) await iptables(tool, ['-I', ...spec.slice(0, 1), '1', ...spec.slice(1)]);
  } catch (error) {
    await removeFirewall(rules.bridge);
    const detail = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
    throw new ToolcellError(
      ToolErrorType.SANDBOX_UNAVAILABLE,
      `sandbox.network allow needs host firewall rules (iptables, as root), which could not be installed: ${detail}. ` +
        'Run toolcell as root on the Docker host, or set sandbox.network to "none".',
      { cause: error },
    );
  }
}

/** Deletes every rule made for this bridge (also those of a crashed toolcell: they carry the bridge's name in a comment). */
export async function removeFirewall(bridge: string): Promise<void> {
  for (const tool of ['iptables', 'ip6tables']) {
    let listing: string;
    try {
      listing = (await run(tool, ['-w', '5', '-S', 'INPUT'], { timeout: 15_000 })).stdout;
    } catch {
      continue;
    }
    for (const line of listing.split('\n')) {
      if (!line.startsWith('-A INPUT ') || !line.includes(`toolcell egress ${bridge}`)) continue;
      const spec = splitRule(line.slice('-A '.length));
      await iptables(tool, ['-D', ...spec]).catch(() => undefined);
    }
  }
}

/** Splits an `iptables -S` line into arguments (its only quoting is the comment's double quotes). */
function splitRule(line: string): string[] {
  const args: string[] = [];
  for (const match of line.matchAll(/"([^"]*)"|(\S+)/g)) args.push(match[1] ?? match[2]!);
  return args;
}
