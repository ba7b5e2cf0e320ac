/**
 * Which `host:port` endpoints the bridge may `adb connect` to — the bridge must not become a port
 * scanner.
 *
 * Endpoints are parsed strictly: `a.b.c.d:PORT` (dotted quad, no leading zeros), `[ipv6]:PORT`
 * (bracketed, no zone id), or `dns.name:PORT` (letters, digits and `-` per label, no all-numeric
 * last label, so `127.1` or `0x7f000001` never reach a resolver); PORT is 1-65535 without leading
 * zeros. Malformed input is INVALID_ARGUMENT; a refusal is PERMISSION_DENIED naming the endpoint
 * and the rule.
 *
 * The allowlist (`DEVICEBRIDGE_TUNNEL_ALLOW`, comma-separated) holds:
 * - CIDRs (`10.0.0.0/8`, `fd00::/8`) or single addresses (`192.168.1.20`, `::1`);
 * - host names (`tunnels.example.com`) and globs `*.farm.example` (`*` stands for one or more whole
 *   labels, never the bare suffix; `*` is allowed only as the first label).
 *
 * Rules:
 * - Nothing configured (unset or empty): only loopback, `127.0.0.0/8` and `::1`. A configured list
 *   REPLACES this default (list `127.0.0.0/8` again if you still want loopback).
 * - Never allowed, whatever is listed: `0.0.0.0/8` and `::`, multicast (`224.0.0.0/4`, `ff00::/8`),
 *   `240.0.0.0/4` (reserved, incl. broadcast `255.255.255.255`), and IPv6 forms that embed an IPv4
 *   address (IPv4-mapped `::ffff:0:0/96`, IPv4-compatible `::/96`, NAT64 `64:ff9b::/96`, 6to4
 *   `2002::/16`, Teredo `2001::/32`) — list the IPv4 address itself instead.
 * - Special ranges open only through a rule that lies inside them: loopback (`127.0.0.0/8`, `::1`),
 *   private (`10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`, `fc00::/7`), shared/CGNAT
 *   (`100.64.0.0/10`) and link-local (`169.254.0.0/16`, `fe80::/10`, e.g. cloud metadata). So
 *   `0.0.0.0/0` means "the public internet", never the bridge's own network.
 * - A DNS name is allowed when the name itself matches a host rule (then it is not resolved: the
 *   operator vouches for it), otherwise it is resolved (`dns.lookup`, all addresses) and EVERY
 *   address must pass the CIDR rules above. adb resolves the name again when it connects, so for
 *   names whose records you do not control list the addresses, not the name.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BridgeError } from '../errors.ts';
import {
  formatIPv4,
  formatIPv6,
  malformedEndpoint,
  type ParsedEndpoint,
  parseDnsName,
  parseEndpoint,
  parseIPv4,
  parseIPv6,
} from '../protocol/adb/endpoint.ts';

export interface EndpointDecision extends ParsedEndpoint {
  /** The allowlist entry that admitted it (for a resolved name: the rules of every address). */
  rule: string;
  /** For a resolved DNS name: the addresses that were checked. */
  addresses?: string[];
}

/** Resolves every address of a host name (default: `dns.lookup(name, {all: true})`). */
export type HostLookup = (host: string) => Promise<string[]>;

export const DEFAULT_ALLOW: readonly string[] = ['127.0.0.0/8', '::1'];

interface Address {
  family: 4 | 6;
  value: bigint;
}

interface Cidr extends Address {
  prefix: number;
}

interface CidrRule extends Cidr {
  kind: 'cidr';
  text: string;
}

interface HostRule {
  kind: 'host' | 'glob';
  /** Lower-case name; for a glob, the suffix after `*.`. */
  name: string;
  text: string;
}

type Rule = CidrRule | HostRule;

const BITS = { 4: 32, 6: 128 } as const;

function mask(family: 4 | 6, prefix: number): bigint {
  const bits = BITS[family];
  return prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
}

function contains(range: Cidr, address: Address): boolean {
  return (
    range.family === address.family && (address.value & mask(range.family, range.prefix)) === range.value
  );
}

/** Is `rule` a sub-range of `range`? */
function inside(rule: Cidr, range: Cidr): boolean {
  return rule.family === range.family && rule.prefix >= range.prefix && contains(range, rule);
}

function parseAddress(text: string): Address | null {
  const v4 = parseIPv4(text);
  if (v4 !== null) return { family: 4, value: v4 };
  const v6 = parseIPv6(text);
  if (v6 !== null) return { family: 6, value: v6 };
  return null;
}

function formatAddress(a: Address): string {
  return a.family === 4 ? formatIPv4(a.value) : formatIPv6(a.value);
}

function formatCidr(c: Cidr): string {
  return `${formatAddress(c)}/${c.prefix}`;
}

// ---------------------------------------------------------------------------------------------
// Special ranges.

function cidr(text: string): Cidr {
  const parsed = parseCidr(text);
  if (parsed === null) throw new Error(`bad built-in CIDR ${text}`);
  return parsed;
}

/** `addr/prefix` (host bits must be zero) or a bare address (= /32, /128). Null when malformed. */
export function parseCidr(text: string): (Cidr & { hostBitsSet: boolean }) | null {
  const slash = text.indexOf('/');
  const address = parseAddress(slash < 0 ? text : text.slice(0, slash));
  if (address === null) return null;
  const bits = BITS[address.family];
  let prefix: number = bits;
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^(?:0|[1-9]\d{0,2})$/.test(p) || Number(p) > bits) return null;
    prefix = Number(p);
  }
  const masked = address.value & mask(address.family, prefix);
  return { family: address.family, value: masked, prefix, hostBitsSet: masked !== address.value };
}

interface NamedRange extends Cidr {
  name: string;
}

function named(text: string, name: string): NamedRange {
  return { ...cidr(text), name };
}

/** Refused whatever the allowlist says. `::1` is checked before the IPv4-compatible `::/96`. */
const NEVER: readonly NamedRange[] = [
  named('0.0.0.0/8', 'the unspecified/"this network" range'),
  named('224.0.0.0/4', 'multicast'),
  named('240.0.0.0/4', 'reserved/broadcast'),
  named('::/128', 'the unspecified address'),
  named('ff00::/8', 'IPv6 multicast'),
  named('::ffff:0:0/96', 'IPv4-mapped IPv6 (list the IPv4 address instead)'),
  named('::ffff:0:0:0/96', 'IPv4-translated IPv6 (list the IPv4 address instead)'),
  named('64:ff9b::/96', 'NAT64 IPv6 (embeds an IPv4 address)'),
  named('2002::/16', '6to4 IPv6 (embeds an IPv4 address)'),
  named('2001::/32', 'Teredo IPv6 (embeds an IPv4 address)'),
];
const LOOPBACK_V6 = named('::1/128', 'loopback');
const COMPAT_V4 = named('::/96', 'IPv4-compatible IPv6 (list the IPv4 address instead)');

/** Allowed only by a rule that lies inside them. */
const GUARDED: readonly NamedRange[] = [
  named('127.0.0.0/8', 'loopback'),
  LOOPBACK_V6,
  named('10.0.0.0/8', 'private'),
  named('172.16.0.0/12', 'private'),
  named('192.168.0.0/16', 'private'),
  named('fc00::/7', 'unique-local (private)'),
  named('100.64.0.0/10', 'shared address space (CGNAT)'),
  named('169.254.0.0/16', 'link-local'),
  named('fe80::/10', 'link-local'),
];

function neverRange(a: Address): NamedRange | undefined {
  const hit = NEVER.find((r) => contains(r, a));
  if (hit) return hit;
  if (contains(COMPAT_V4, a) && !contains(LOOPBACK_V6, a)) return COMPAT_V4;
  return undefined;
}

function parseRule(text: string): Rule | string {
  const t = text.trim();
  if (t === '') return 'empty entry';
  if (
    /^[0-9A-Fa-f:.]+(?:\/\d+)?$/.test(t) &&
    (t.includes('/') || parseAddress(t) !== null || /^[\d.]+$/.test(t))
  ) {
    const c = parseCidr(t);
    if (c === null) return 'not a valid address or CIDR';
    if (c.hostBitsSet) return `host bits set (did you mean ${formatCidr(c)}?)`;
    return { kind: 'cidr', family: c.family, value: c.value, prefix: c.prefix, text: formatCidr(c) };
  }
  if (t.startsWith('*.')) {
    const suffix = parseDnsName(t.slice(2));
    if (suffix === null) return 'a glob must be "*." followed by a host name';
    if (!suffix.includes('.')) return 'a glob suffix needs at least two labels (e.g. *.farm.example)';
    return { kind: 'glob', name: suffix, text: `*.${suffix}` };
  }
  if (t.includes('*')) return '"*" is allowed only as the first label ("*.example.com")';
  const name = parseDnsName(t);
  if (name === null) return 'not a CIDR, address, host name or "*.domain" glob';
  return { kind: 'host', name, text: name };
}

export interface EndpointPolicyOptions {
  /** Allowlist entries; undefined or empty = the loopback-only default. */
  allow?: readonly string[];
  /** Name resolution for DNS endpoints (default `dns.lookup(name, {all: true})`). */
  lookup?: HostLookup;
  /** Where the entries came from, for error messages (e.g. `DEVICEBRIDGE_TUNNEL_ALLOW`). */
  source?: string;
}

const defaultLookup: HostLookup = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

export class EndpointPolicy {
  readonly #rules: Rule[];
  readonly #lookup: HostLookup;
  readonly #isDefault: boolean;

  constructor(options: EndpointPolicyOptions = {}) {
    const allow = options.allow ?? [];
    this.#isDefault = allow.every((e) => e.trim() === '');
    const entries = this.#isDefault ? DEFAULT_ALLOW : allow.filter((e) => e.trim() !== '');
    const source = options.source ?? 'tunnel allowlist';
    this.#rules = entries.map((entry, index) => {
      const rule = parseRule(entry);
      if (typeof rule === 'string') {
        throw new BridgeError(
          'INVALID_ARGUMENT',
          `${source} entry ${index} ${JSON.stringify(entry.slice(0, 100))}: ${rule}`,
          { details: { errors: [{ path: `${source}.${index}`, message: rule }] } },
        );
      }
      return rule;
    });
    this.#lookup = options.lookup ?? defaultLookup;
  }

  /** The rules in canonical form (`127.0.0.0/8`, `::1/128`, `*.farm.example`). */
  get rules(): string[] {
    return this.#rules.map((r) => r.text);
  }

  get isDefault(): boolean {
    return this.#isDefault;
  }

  #describeAllowlist(): string {
    return this.#isDefault
      ? 'default allowlist: loopback only (set DEVICEBRIDGE_TUNNEL_ALLOW to allow more)'
      : `allowlist: ${this.rules.join(', ')}`;
  }

  #deny(
    parsed: ParsedEndpoint,
    reason: string,
    rule: string,
    extra: Record<string, unknown> = {},
  ): BridgeError {
    return new BridgeError('PERMISSION_DENIED', `endpoint ${parsed.endpoint} refused: ${reason} (${rule})`, {
      details: { endpoint: parsed.endpoint, rule, ...extra },
    });
  }

  /** The CIDR rule admitting `address`, or the reason and rule refusing it. */
  #checkAddress(address: Address): { ok: true; rule: string } | { ok: false; reason: string; rule: string } {
    const text = formatAddress(address);
    const never = neverRange(address);
    if (never) {
      return { ok: false, reason: `${text} is ${never.name}`, rule: `never allowed: ${formatCidr(never)}` };
    }
    const guard = GUARDED.find((g) => contains(g, address));
    const candidates = this.#rules.filter(
      (r): r is CidrRule =>
        r.kind === 'cidr' && contains(r, address) && (guard === undefined || inside(r, guard)),
    );
    const best = candidates.sort((a, b) => b.prefix - a.prefix)[0];
    if (best) return { ok: true, rule: best.text };
    if (guard) {
      return {
        ok: false,
        reason: `${text} is in the ${guard.name} range ${formatCidr(guard)}, which opens only when a rule inside it is listed`,
        rule: this.#describeAllowlist(),
      };
    }
    return { ok: false, reason: `${text} is not in the allowlist`, rule: this.#describeAllowlist() };
  }

  /**
   * Parse and check an endpoint. Resolves the canonical endpoint and the admitting rule; throws
   * INVALID_ARGUMENT (malformed), PERMISSION_DENIED (refused, naming endpoint and rule) or
   * UNAVAILABLE (transient DNS failure). Never connects anywhere.
   */
  async check(endpoint: unknown): Promise<EndpointDecision> {
    const parsed = parseEndpoint(endpoint);
    if (parsed.kind !== 'dns') {
      const address = parseAddress(parsed.host);
      if (address === null) throw malformedEndpoint(endpoint, 'unparseable address');
      const verdict = this.#checkAddress(address);
      if (!verdict.ok) throw this.#deny(parsed, verdict.reason, verdict.rule, { address: parsed.host });
      return { ...parsed, rule: verdict.rule };
    }
    const hostRule = this.#rules.find(
      (r): r is HostRule =>
        (r.kind === 'host' && r.name === parsed.host) ||
        (r.kind === 'glob' && parsed.host.endsWith(`.${r.name}`)),
    );
    if (hostRule) return { ...parsed, rule: hostRule.text };

    let resolved: string[];
    try {
      resolved = await this.#lookup(parsed.host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAI_AGAIN' || code === 'ETIMEOUT' || code === 'ESERVFAIL') {
        throw new BridgeError(
          'UNAVAILABLE',
          `endpoint ${parsed.endpoint}: cannot resolve ${parsed.host} now (${code})`,
          {
            details: { endpoint: parsed.endpoint },
          },
        );
      }
      throw this.#deny(
        parsed,
        `${parsed.host} does not resolve (${code ?? (err as Error).message})`,
        'unresolvable name',
      );
    }
    if (resolved.length === 0)
      throw this.#deny(parsed, `${parsed.host} resolves to no address`, 'unresolvable name');
    const rules: string[] = [];
    const addresses: string[] = [];
    for (const raw of resolved) {
      const text = raw.replace(/%.*$/, '');
      const address = parseAddress(text);
      if (address === null) {
        throw this.#deny(
          parsed,
          `${parsed.host} resolved to an unparseable address ${JSON.stringify(raw)}`,
          'resolution',
          {
            addresses: resolved,
          },
        );
      }
      const shown = formatAddress(address);
      const verdict = this.#checkAddress(address);
      if (!verdict.ok) {
        throw this.#deny(
          parsed,
          `${parsed.host} resolves to ${shown}: ${verdict.reason}; every resolved address must be allowed, or list the name`,
          verdict.rule,
          { address: shown, addresses: resolved },
        );
      }
      addresses.push(shown);
      if (!rules.includes(verdict.rule)) rules.push(verdict.rule);
    }
    return { ...parsed, rule: rules.join(', '), addresses };
  }
}

/** The policy from `DEVICEBRIDGE_TUNNEL_ALLOW` (comma-separated; unset or empty = loopback only). */
export function endpointPolicyFromEnv(
  env: Record<string, string | undefined> = process.env,
  options: { lookup?: HostLookup } = {},
): EndpointPolicy {
  const raw = env['DEVICEBRIDGE_TUNNEL_ALLOW'] ?? '';
  const allow = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return new EndpointPolicy({ allow, source: 'DEVICEBRIDGE_TUNNEL_ALLOW', ...options });
}
