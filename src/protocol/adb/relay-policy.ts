/**
 * Which device services the lease's adb endpoint relays, and the endpoint's port range. Pure.
 *
 * Relayed: what `adb shell`, `exec-out`, `push`/`pull`/`sync`, `install` (abb_exec, cmd, or sync +
 * pm), `forward` (device-side sockets) and jdwp use. `reverse:` is answered by the endpoint itself
 * (src/adb/relay-reverse.ts). Refused (CLSE): services that change the device's adb transport or reach
 * beyond the lease — `tcpip:`/`usb:` (the bridge would lose the device), `reboot:`, `root:`,
 * `unroot:`, `remount:`, `*-verity`, `backup:`/`restore:` — and anything unknown.
 */
import { BridgeError } from '../../errors.ts';
import { parseEndpoint } from './endpoint.ts';

const RELAYED_PREFIXES = [
  'shell:',
  'shell,',
  'exec:',
  'sync:',
  'abb_exec:',
  'abb:',
  'tcp:',
  'localabstract:',
  'localreserved:',
  'localfilesystem:',
  'jdwp:',
  'track-jdwp',
  'track-app',
  'framebuffer:',
] as const;

/**
 * Whether the service is one of `adb reverse`'s (`reverse:forward:…`, `reverse:list-forward`, …):
 * the endpoint answers those itself (src/adb/relay-reverse.ts), never relays them as they are.
 */
export function isReverseService(service: string): boolean {
  return service.startsWith('reverse:');
}

/** Longest service name relayed, in bytes (the host protocol frames requests with 4 hex digits). */
export const MAX_SERVICE_BYTES = 0xffff;

/**
 * Whether the endpoint relays the service an `OPEN` names. NUL separates arguments only in `abb:`
 * and `abb_exec:` (what `adb install` sends); elsewhere it would cut the name short on the device.
 */
export function isRelayedService(service: string): boolean {
  if (service.length === 0 || Buffer.byteLength(service, 'utf8') > MAX_SERVICE_BYTES) return false;
  if (service.includes('\0') && !/^abb(?:_exec)?:/.test(service)) return false;
  return RELAYED_PREFIXES.some((prefix) =>
    prefix.endsWith(':') || prefix.endsWith(',') ? service.startsWith(prefix) : service === prefix,
  );
}

export interface PortRange {
  from: number;
  to: number;
}

/**
 * `0` (the system picks a free port) or `FROM-TO` (inclusive, 1..65535, FROM ≤ TO), or one port.
 * Throws INVALID_ARGUMENT naming the problem.
 */
export function parsePortRange(text: string): PortRange {
  const m = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5})\s*)?$/.exec(text);
  if (m === null) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `port range ${JSON.stringify(text)}: expected 0, PORT or FROM-TO`,
    );
  }
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  if (from === 0 && to === 0) return { from: 0, to: 0 };
  if (from < 1 || to > 65535 || from > to) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `port range ${JSON.stringify(text)}: expected 1 ≤ FROM ≤ TO ≤ 65535 (or 0 for any free port)`,
    );
  }
  return { from, to };
}

/**
 * The `host:port` clients `adb connect` to, by the one endpoint rule (endpoint.ts): IPv6 in
 * brackets, canonical form. Throws INVALID_ARGUMENT for a host the rule refuses.
 */
export function advertisedEndpoint(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return parseEndpoint(`${bare.includes(':') ? `[${bare}]` : bare}:${port}`).endpoint;
}
