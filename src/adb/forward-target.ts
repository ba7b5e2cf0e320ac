/**
 * Where the bridge connects to reach a forward's local side: `tcp:PORT` on the adb server's host, or
 * `localfilesystem:/PATH`, a unix socket the adb server listens on (the bridge's own server on this
 * host; see socket-dir.ts). Pure; `net.connect(target)` takes either shape.
 */

/** Longest unix socket path Linux accepts (sun_path is 108 bytes with its NUL). */
export const MAX_SOCKET_PATH = 107;

export type ForwardTarget = { host: string; port: number } | { path: string };

const TCP = /^tcp:(\d{1,5})$/;
const ABSTRACT = /^localabstract:[A-Za-z0-9._-]{1,100}$/;
/** An absolute path of plain characters: no `;` (adb's spec separator), no spaces, no `..` step. */
const FILESYSTEM = /^localfilesystem:(\/[A-Za-z0-9._/-]+)$/;

/** The unix socket path of a `localfilesystem:` spec the bridge accepts, or undefined. */
export function filesystemSpecPath(spec: string): string | undefined {
  const path = FILESYSTEM.exec(spec)?.[1];
  if (path === undefined || Buffer.byteLength(path) > MAX_SOCKET_PATH) return undefined;
  if (path.split('/').some((step) => step === '..')) return undefined;
  return path;
}

/** A spec the bridge may send in `forward` / `killforward` (`tcp:`, `localabstract:`, `localfilesystem:`). */
export function isForwardSpec(spec: string): boolean {
  const port = TCP.exec(spec)?.[1];
  if (port !== undefined) return Number(port) <= 65535;
  return ABSTRACT.test(spec) || filesystemSpecPath(spec) !== undefined;
}

/** How to connect to a forward's local side (`host` is the adb server's host, for `tcp:`). */
export function forwardTarget(local: string, host: string): ForwardTarget {
  const port = TCP.exec(local)?.[1];
  if (port !== undefined) return { host, port: Number(port) };
  const path = filesystemSpecPath(local);
  if (path !== undefined) return { path };
  throw new Error(
    `forward local side ${JSON.stringify(local)} is neither tcp:PORT nor localfilesystem:/PATH`,
  );
}

/**
 * A forward's local side as the bridge reports it (teardown records, which clients read): a socket's
 * path is the bridge host's business, so only `localfilesystem:` and the file name are shown.
 */
export function describeLocal(local: string): string {
  const path = filesystemSpecPath(local);
  return path === undefined ? local : `localfilesystem:…/${path.slice(path.lastIndexOf('/') + 1)}`;
}
