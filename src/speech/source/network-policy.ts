// Which addresses the engine may fetch from. A team service that fetches any URL it is given would let every client
// read the service's own network (loopback admin ports, the cloud metadata address, private hosts) and get the answer
// back as an article. So unless private networks are allowed (the local engine of one person, who may convert their
// own localhost docs), every connection's address must be public unicast.
//
// The check runs where the socket is made, on the address the socket connects to: the host name is resolved once
// here and the connection goes to that very address (no second lookup an attacker's DNS could answer differently),
// for the first request and for every redirect hop alike. Address spellings (0x7f000001, 2130706433, 017700000001,
// [::ffff:127.0.0.1], trailing dots) need no handling of their own: the URL parser and the resolver turn them into
// the address that is checked.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Agent } from 'undici';
import { http } from '../http';

/** A connection this engine refused to make or could not make; its message is safe to show to any client. */
export class UnreachableAddressError extends Error {
  readonly code = 'EADDRBLOCKED';
  constructor(readonly blocked: boolean) {
    super(blocked ? 'the address is not on the public internet' : 'the address could not be reached');
    this.name = 'UnreachableAddressError';
  }
}

/**
 * True for addresses on the public internet: unicast, and not loopback, private (RFC 1918), link-local (this includes
 * the cloud metadata address 169.254.169.254), carrier-grade NAT (100.64/10, Alibaba's metadata), unique-local (fc00::/7,
 * AWS's IPv6 metadata), multicast, broadcast, unspecified, reserved, documentation or benchmarking ranges, nor IPv6
 * forms that carry an IPv4 address a gateway would reach for us (mapped, compatible, 6to4, Teredo, NAT64).
 */
export function isPublicAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, ''));
  } catch {
    return false;
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

export interface NetworkPolicy {
  allowPrivateNetwork: boolean;
  /**
   * Host names (as written in URLs, compared without case and trailing dot) that may resolve to private addresses even
   * when private networks are not allowed: a team's intranet wiki, say. Only the name is trusted, so a redirect from
   * such a host to another name or to an address literal is checked like any other.
   */
  allowedHosts?: readonly string[];
}

function normalizeHost(name: string): string {
  return name
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '')
    .toLowerCase();
}

/** Resolves a host name once and returns the address to connect to, or throws UnreachableAddressError. */
export async function resolveAllowed(
  hostname: string,
  policy: NetworkPolicy,
): Promise<{ address: string; family: 4 | 6 }> {
  const name = hostname.replace(/^\[|\]$/g, '');
  const allowPrivateNetwork =
    policy.allowPrivateNetwork ||
    (policy.allowedHosts ?? []).some((host) => normalizeHost(host) === normalizeHost(name));
  let candidates: { address: string; family: number }[];
  if (isIP(name) !== 0) {
    candidates = [{ address: name, family: isIP(name) }];
  } else {
    try {
      candidates = await lookup(name, { all: true, verbatim: true });
    } catch (error) {
      // From outside, a name that does not resolve must look like one that resolves to a blocked address.
      if (!allowPrivateNetwork) throw new UnreachableAddressError(false);
      throw error;
    }
  }
  const usable = allowPrivateNetwork ? candidates : candidates.filter((c) => isPublicAddress(c.address));
  const chosen = usable[0];
  if (!chosen) throw new UnreachableAddressError(true);
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

/**
 * An undici dispatcher whose every connection (first request and redirect hops alike) goes to an address checked by
 * the policy. The TLS server name stays the host name of the URL, so certificates are checked as usual.
 */
export function policyAgent(options: NetworkPolicy & { connectTimeoutMs: number }): Agent {
  const { Agent, buildConnector } = http();
  const connectTo = buildConnector({ timeout: options.connectTimeoutMs });
  return new Agent({
    connections: 4,
    connect(connectOptions, callback) {
      resolveAllowed(connectOptions.hostname, options).then(
        ({ address }) => connectTo({ ...connectOptions, hostname: address }, callback),
        (error: Error) => callback(error, null),
      );
    },
  });
}
