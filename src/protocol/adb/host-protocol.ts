/**
 * adb's host ("smart socket") protocol between a client and the adb server (AOSP `OVERVIEW.TXT`,
 * `SERVICES.TXT`). Pure: no sockets here, the I/O layer (src/adb/host-connection.ts) only moves bytes.
 *
 * - A request is the service name prefixed by its length in bytes as 4 lower-case hex digits:
 *   `000chost:version`.
 * - The server answers with a 4-byte status: `OKAY`, or `FAIL` followed by a length-prefixed
 *   message (4 hex digits + that many bytes), after which it closes the connection.
 * - Services that return a value (`host:version`, `host:devices`, `host:connect:...`) send it as a
 *   length-prefixed string after `OKAY`; `host:track-devices` sends one such string per change.
 *   `host-serial:S:forward:...` answers `OKAY` twice (transport, then result) and, for `tcp:0`, the
 *   bound port as a length-prefixed string.
 *
 * FAIL messages map to typed BridgeErrors here (`adbFailureCode`), in one place.
 */
import { BridgeError, type ErrorCode } from '../../errors.ts';

export const OKAY = 'OKAY';
export const FAIL = 'FAIL';
/** The largest payload a 4-hex-digit length can announce. */
export const MAX_HOST_PAYLOAD = 0xffff;

/**
 * adb's failure answer: `FAIL` + the message length-prefixed (the adb server on a host request, adbd
 * on a service stream such as `reverse:`). Never throws: a message longer than a 4-hex-digit length
 * allows is cut at that many bytes.
 */
export function encodeFailure(message: string): Buffer {
  let bytes = Buffer.from(message, 'utf8');
  if (bytes.length > MAX_HOST_PAYLOAD) bytes = bytes.subarray(0, MAX_HOST_PAYLOAD);
  return Buffer.concat([Buffer.from(FAIL, 'latin1'), encodeLengthPrefixed(bytes)]);
}

/** The port of a `tcp:N` socket spec when min ≤ N ≤ 65535; undefined for anything else. */
export function tcpSpecPort(spec: string, min = 0): number | undefined {
  const m = /^tcp:(\d{1,5})$/.exec(spec);
  if (m === null) return undefined;
  const port = Number(m[1]);
  return port >= min && port <= 65535 ? port : undefined;
}

/** `n` as the 4 lower-case hex digits adb uses for lengths (0 ≤ n ≤ 0xffff). */
export function encodeHex4(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n > MAX_HOST_PAYLOAD) {
    throw new RangeError(`length ${n} does not fit in 4 hex digits`);
  }
  return n.toString(16).padStart(4, '0');
}

/** A length-prefixed payload: 4 hex digits (its byte length) + the bytes. */
export function encodeLengthPrefixed(payload: string | Uint8Array): Buffer {
  const bytes = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload);
  if (bytes.length > MAX_HOST_PAYLOAD) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `adb request of ${bytes.length} bytes is too long (at most ${MAX_HOST_PAYLOAD})`,
    );
  }
  return Buffer.concat([Buffer.from(encodeHex4(bytes.length), 'latin1'), bytes]);
}

/** A host request: the service name, length-prefixed (`000chost:version`). */
export function encodeHostRequest(service: string): Buffer {
  return encodeLengthPrefixed(service);
}

/** A `FAIL` reply from the adb server; `adbMessage` is its payload as adb sent it. */
export class AdbFailError extends Error {
  readonly adbMessage: string;

  constructor(adbMessage: string) {
    // The same text adbkit used, so messages (and what is matched against them) stay the same.
    super(`Failure: '${adbMessage}'`);
    this.name = 'AdbFailError';
    this.adbMessage = adbMessage;
  }
}

/** Bytes that are not the host protocol: the connection's state is unknown, destroy it. */
export class AdbProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdbProtocolError';
  }
}

function parseHex4(bytes: Buffer): number {
  const text = bytes.toString('latin1');
  if (!/^[0-9a-fA-F]{4}$/.test(text)) {
    throw new AdbProtocolError(`expected a 4-hex-digit length, got ${JSON.stringify(text)}`);
  }
  return Number.parseInt(text, 16);
}

/**
 * Incremental reader of a host-protocol reply. Bytes arrive in any split (`push`); each `read*`
 * either consumes a whole item and returns it, or returns undefined and consumes nothing (more
 * bytes needed). Unexpected bytes throw AdbProtocolError; a complete `FAIL` throws AdbFailError.
 */
export class HostReplyReader {
  /**
   * Bytes joined so far, and chunks pushed since: joined only when a read needs them, so a long
   * stream read to its end (`takeRest`, e.g. a screenshot through `exec:`) is copied once, not once
   * per chunk.
   */
  #head: Buffer = Buffer.alloc(0);
  #tail: Buffer[] = [];
  #tailBytes = 0;

  get #buffer(): Buffer {
    if (this.#tail.length > 0) {
      this.#head = Buffer.concat([this.#head, ...this.#tail]);
      this.#tail = [];
      this.#tailBytes = 0;
    }
    return this.#head;
  }

  set #buffer(bytes: Buffer) {
    this.#head = bytes;
    this.#tail = [];
    this.#tailBytes = 0;
  }

  push(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.#tail.push(Buffer.from(bytes));
    this.#tailBytes += bytes.length;
  }

  get buffered(): number {
    return this.#head.length + this.#tailBytes;
  }

  readExactly(n: number): Buffer | undefined {
    if (this.#buffer.length < n) return undefined;
    const out = this.#buffer.subarray(0, n);
    this.#buffer = this.#buffer.subarray(n);
    return out;
  }

  /** `OKAY` (resolves 'OKAY'), a complete `FAIL` + message (throws AdbFailError), or undefined. */
  readStatus(): typeof OKAY | undefined {
    if (this.#buffer.length < 4) return undefined;
    const status = this.#buffer.subarray(0, 4).toString('latin1');
    if (status === OKAY) {
      this.#buffer = this.#buffer.subarray(4);
      return OKAY;
    }
    if (status !== FAIL) {
      throw new AdbProtocolError(`expected OKAY or FAIL, got ${JSON.stringify(status)}`);
    }
    if (this.#buffer.length < 8) return undefined;
    const length = parseHex4(this.#buffer.subarray(4, 8));
    if (this.#buffer.length < 8 + length) return undefined;
    const message = this.#buffer.subarray(8, 8 + length).toString('utf8');
    this.#buffer = this.#buffer.subarray(8 + length);
    throw new AdbFailError(message);
  }

  /** A length-prefixed payload, or undefined. */
  readString(): Buffer | undefined {
    if (this.#buffer.length < 4) return undefined;
    const length = parseHex4(this.#buffer.subarray(0, 4));
    if (this.#buffer.length < 4 + length) return undefined;
    const out = this.#buffer.subarray(4, 4 + length);
    this.#buffer = this.#buffer.subarray(4 + length);
    return out;
  }

  /**
   * At the end of the stream: a `FAIL` whose message was cut short still fails, with what arrived
   * of its message (adb closes right after a FAIL; a slow close must not hide the reason).
   */
  failAtEnd(): AdbFailError | undefined {
    if (this.#buffer.subarray(0, 4).toString('latin1') !== FAIL) return undefined;
    return new AdbFailError(this.#buffer.subarray(8).toString('utf8'));
  }

  /** Everything buffered and not read yet (e.g. the first bytes of a stream after `OKAY`). */
  takeRest(): Buffer {
    const out = this.#buffer;
    this.#buffer = Buffer.alloc(0);
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Replies of particular services.

/** `host:version`: the server's protocol version (a length-prefixed hex number). */
export function parseVersion(payload: Buffer): number {
  const text = payload.toString('latin1');
  if (!/^[0-9a-fA-F]{1,8}$/.test(text)) {
    throw new AdbProtocolError(`host:version answered ${JSON.stringify(text.slice(0, 16))}`);
  }
  return Number.parseInt(text, 16);
}

export interface DeviceListEntry {
  serial: string;
  state: string;
}

/** `host:devices` / one `host:track-devices` update: `SERIAL\tSTATE\n` lines. */
export function parseDeviceList(text: string): DeviceListEntry[] {
  const out: DeviceListEntry[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.replace(/\r$/, '');
    if (trimmed.trim() === '') continue;
    const tab = trimmed.indexOf('\t');
    if (tab < 0) continue;
    out.push({ serial: trimmed.slice(0, tab), state: trimmed.slice(tab + 1).trim() });
  }
  return out;
}

export interface DeviceListChange {
  serial: string;
  /** The new state; `absent` for a device no longer listed. */
  state: string;
}

/** What changed between two device lists (added, changed state, removed), in list order. */
export function diffDeviceLists(
  before: readonly DeviceListEntry[],
  after: readonly DeviceListEntry[],
): DeviceListChange[] {
  const old = new Map(before.map((d) => [d.serial, d.state]));
  const now = new Set(after.map((d) => d.serial));
  const changes: DeviceListChange[] = [];
  for (const d of after) {
    if (old.get(d.serial) !== d.state) changes.push({ serial: d.serial, state: d.state });
  }
  for (const d of before) {
    if (!now.has(d.serial)) changes.push({ serial: d.serial, state: 'absent' });
  }
  return changes;
}

export interface ForwardListEntry {
  serial: string;
  local: string;
  remote: string;
}

/** `host:list-forward`: `SERIAL LOCAL REMOTE` lines. */
export function parseForwardList(text: string): ForwardListEntry[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [serial = '', local = '', remote = ''] = l.trim().split(/\s+/);
      return { serial, local, remote };
    });
}

/** `host:connect:HOST:PORT` answers OKAY with a message; only these messages mean connected. */
export function isConnectedMessage(message: string): boolean {
  return /connected to|already connected/.test(message);
}

/** `host:disconnect:HOST:PORT` answers OKAY with an empty message or `disconnected ...`. */
export function isDisconnectedMessage(message: string): boolean {
  return message === '' || /^disconnected/.test(message);
}

// ---------------------------------------------------------------------------------------------
// adb's messages → error codes.

/**
 * The BridgeError code for a message adb (or the connection to it) gave, with a short reason.
 * Checked in this order; unknown messages are INTERNAL.
 */
export function adbFailureCode(message: string): { code: ErrorCode; reason: string } {
  if (/device offline|device still connecting|closed|ECONNRESET|EPIPE/i.test(message)) {
    return { code: 'DEVICE_OFFLINE', reason: 'device offline' };
  }
  if (/unauthorized|failed to authenticate|still authorizing/i.test(message)) {
    return { code: 'UNAUTHORIZED_DEVICE', reason: 'device unauthorized' };
  }
  if (/device '.*' not found|no devices|device not found/i.test(message)) {
    return { code: 'DEVICE_OFFLINE', reason: 'device not connected' };
  }
  if (/more than one (?:device|emulator)/i.test(message)) {
    // The bridge always names the device; adb saying this means the request was malformed.
    return { code: 'INTERNAL', reason: 'no device named' };
  }
  if (/ECONNREFUSED|connect ECONN|adb server/i.test(message)) {
    return { code: 'UNAVAILABLE', reason: 'adb server unreachable' };
  }
  if (/timed? ?out|TIMEOUT|AbortError/i.test(message)) {
    return { code: 'TIMEOUT', reason: 'timed out' };
  }
  return { code: 'INTERNAL', reason: 'failed' };
}

/**
 * The rest of a `host-serial:S:forward:LOCAL;REMOTE` (or `killforward`) reply after its first
 * `OKAY`: an optional second status (`OKAY`, or `FAIL` + message: throws AdbFailError) and, when
 * LOCAL was `tcp:0`, the bound port as a length-prefixed string. Resolves the port text, if any.
 */
export function parseForwardResult(bytes: Buffer): string | undefined {
  const reader = new HostReplyReader();
  reader.push(bytes);
  const head = bytes.subarray(0, 4).toString('latin1');
  if (head === OKAY || head === FAIL) {
    if (reader.readStatus() === undefined) throw reader.failAtEnd() ?? new AdbProtocolError('cut reply');
  }
  if (reader.buffered === 0) return undefined;
  const port = reader.readString();
  if (port === undefined) throw new AdbProtocolError('forward reply cut short');
  return port.toString('latin1');
}
