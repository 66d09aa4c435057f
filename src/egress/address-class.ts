import ipaddr from 'ipaddr.js';

/**
 * Which addresses the egress proxy connects to unless an IP entry lists them:
 * public unicast only. ipaddr.js names every special range (loopback,
 * private, link-local with 169.254.169.254 in it, carrier-grade NAT with
 * Alibaba's 100.100.100.200, multicast, unique-local with AWS's
 * fd00:ec2::254, reserved, 6to4 and Teredo relays, the unspecified address);
 * anything it does not call `unicast` is refused, so a name that resolves to
 * 127.0.0.1 or a metadata service does not become a way in.
 */
export function addressIsPublic(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return address.range() === 'unicast';
}
