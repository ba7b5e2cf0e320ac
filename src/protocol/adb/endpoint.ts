/**
 * The one `host:port` parser: tunnel endpoints (src/devices/endpoint-policy.ts), `adb connect` (AdbClient)
 * and `ADB_SERVER` (config, AdbRuntime) all use it. Pure and strict:
 *
 * - `a.b.c.d:PORT`: a dotted quad, four decimal octets 0-255 without leading zeros;
 * - `[ipv6]:PORT`: bracketed RFC 4291 text (incl. `::` and a dotted IPv4 tail), no zone id;
 * - `dns.name:PORT`: letters, digits and `-` per label, not all-numeric in its last label, so
 *   `127.1` or `0x7f000001` never reach a resolver;
 * - PORT is 1-65535 without leading zeros.
 *
 * Results are canonical (lower-case names, RFC 5952 IPv6); malformed input is INVALID_ARGUMENT
 * naming the rule. `endpointSchema` is the same rule as a zod schema (for configuration).
 */
import { z } from 'zod';
import { BridgeError } from '../../errors.ts';

export type EndpointKind = 'ipv4' | 'ipv6' | 'dns';

export interface ParsedEndpoint {
  /** Canonical host: dotted quad, compressed lower-case IPv6 (no brackets), or lower-case DNS name. */
  host: string;
  port: number;
  kind: EndpointKind;
  /** Canonical `host:port` (`[ipv6]:port`), the form the bridge passes to `adb connect`. */
  endpoint: string;
}

/** Strict dotted quad: four decimal octets 0-255 without leading zeros. */
export function parseIPv4(text: string): bigint | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (m === null) return null;
  let value = 0n;
  for (let i = 1; i <= 4; i++) {
    const octet = m[i]!;
    if (octet.length > 1 && octet.startsWith('0')) return null;
    const n = Number(octet);
    if (n > 255) return null;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

/** Strict IPv6 text (RFC 4291 forms incl. `::` and a dotted IPv4 tail), no zone id. */
export function parseIPv6(text: string): bigint | null {
  if (text.length < 2 || text.length > 45 || !/^[0-9A-Fa-f:.]+$/.test(text)) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groupsOf = (part: string, allowTail: boolean): number[] | null => {
    if (part === '') return [];
    const pieces = part.split(':');
    const out: number[] = [];
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (allowTail && i === pieces.length - 1 && piece.includes('.')) {
        const v4 = parseIPv4(piece);
        if (v4 === null) return null;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else {
        if (!/^[0-9A-Fa-f]{1,4}$/.test(piece)) return null;
        out.push(Number.parseInt(piece, 16));
      }
    }
    return out;
  };
  let groups: number[];
  if (halves.length === 1) {
    const all = groupsOf(halves[0]!, true);
    if (all === null || all.length !== 8) return null;
    groups = all;
  } else {
    const head = groupsOf(halves[0]!, false);
    const tail = groupsOf(halves[1]!, true);
    if (head === null || tail === null || head.length + tail.length > 7) return null;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  }
  let value = 0n;
  for (const g of groups) value = (value << 16n) | BigInt(g);
  return value;
}

export function formatIPv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
}

/** RFC 5952 text: lower case, longest run (≥ 2) of zero groups compressed, first such run on ties. */
export function formatIPv6(value: bigint): string {
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((value >> BigInt(i * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const NUMERIC_HOST = /^(?:0x[0-9a-f]*|\d+)(?:\.(?:0x[0-9a-f]*|\d+))*$/;

/** A lower-case DNS name (trailing dot dropped), or null when not a valid host name. */
export function parseDnsName(text: string): string | null {
  const name = (text.endsWith('.') ? text.slice(0, -1) : text).toLowerCase();
  if (name.length === 0 || name.length > 253) return null;
  const labels = name.split('.');
  if (!labels.every((l) => DNS_LABEL.test(l))) return null;
  // inet_aton forms (`127.1`, `0x7f000001`, `017700000001`) and all-numeric TLDs are not names.
  if (NUMERIC_HOST.test(name) || /^\d+$/.test(labels[labels.length - 1]!)) return null;
  return name;
}

/** The INVALID_ARGUMENT error for a malformed endpoint, naming the rule it breaks. */
export function malformedEndpoint(endpoint: unknown, rule: string): BridgeError {
  const shown = typeof endpoint === 'string' ? JSON.stringify(endpoint.slice(0, 100)) : typeof endpoint;
  return new BridgeError('INVALID_ARGUMENT', `endpoint ${shown} is malformed: ${rule}`, {
    details: {
      endpoint: typeof endpoint === 'string' ? endpoint.slice(0, 300) : null,
      rule,
      errors: [{ path: 'endpoint', message: rule }],
    },
  });
}

/** Parse `host:port` strictly (see the module comment); throws INVALID_ARGUMENT naming the rule. */
export function parseEndpoint(endpoint: unknown): ParsedEndpoint {
  if (typeof endpoint !== 'string') throw malformedEndpoint(endpoint, 'must be a string "host:port"');
  if (endpoint.length === 0 || endpoint.length > 300)
    throw malformedEndpoint(endpoint, 'must be 1-300 characters');
  let hostText: string;
  let portText: string;
  let bracketed = false;
  if (endpoint.startsWith('[')) {
    const m = /^\[([^\]]*)\]:([^:]*)$/.exec(endpoint);
    if (m === null) throw malformedEndpoint(endpoint, 'an IPv6 endpoint must be "[address]:port"');
    hostText = m[1]!;
    portText = m[2]!;
    bracketed = true;
  } else {
    const colon = endpoint.lastIndexOf(':');
    if (colon < 0) throw malformedEndpoint(endpoint, 'missing ":port"');
    hostText = endpoint.slice(0, colon);
    portText = endpoint.slice(colon + 1);
    if (hostText.includes(':'))
      throw malformedEndpoint(endpoint, 'an IPv6 host must be in brackets: "[address]:port"');
  }
  if (!/^[1-9]\d{0,4}$/.test(portText) || Number(portText) > 65535) {
    throw malformedEndpoint(endpoint, 'port must be an integer 1-65535 without leading zeros');
  }
  const port = Number(portText);
  if (bracketed) {
    if (hostText.includes('%')) throw malformedEndpoint(endpoint, 'IPv6 zone ids are not allowed');
    const v6 = parseIPv6(hostText);
    if (v6 === null) throw malformedEndpoint(endpoint, `${JSON.stringify(hostText)} is not an IPv6 address`);
    const host = formatIPv6(v6);
    return { host, port, kind: 'ipv6', endpoint: `[${host}]:${port}` };
  }
  if (/^[0-9.]+$/.test(hostText)) {
    const v4 = parseIPv4(hostText);
    if (v4 === null) {
      throw malformedEndpoint(
        endpoint,
        `${JSON.stringify(hostText)} is not a dotted-quad IPv4 address (0-255, no leading zeros)`,
      );
    }
    return { host: hostText, port, kind: 'ipv4', endpoint: `${hostText}:${port}` };
  }
  const name = parseDnsName(hostText);
  if (name === null) {
    throw malformedEndpoint(
      endpoint,
      `${JSON.stringify(hostText.slice(0, 80))} is not a host name (labels of letters, digits and "-", not all-numeric)`,
    );
  }
  return { host: name, port, kind: 'dns', endpoint: `${name}:${port}` };
}

/** The endpoint rule as a zod schema: a `host:port` string, canonicalised (`[fd00::1]:5555`). */
export const endpointSchema = z.string().transform((text, ctx) => {
  try {
    return parseEndpoint(text).endpoint;
  } catch (err) {
    ctx.addIssue({
      code: 'custom',
      message: err instanceof BridgeError ? String(err.details?.['rule'] ?? err.message) : String(err),
    });
    return z.NEVER;
  }
});
