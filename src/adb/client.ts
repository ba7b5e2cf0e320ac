/**
 * The bridge's adb client. It reaches the adb server through an `AdbServerConnector` and speaks the
 * host protocol through protocol/adb/host-protocol.ts (framing, OKAY/FAIL, replies) and pushes
 * files with protocol/adb/sync-protocol.ts — no hand-written framing here, and no adbkit. Every
 * operation takes a deadline and returns native promises; failures become typed BridgeErrors
 * (errors.ts). Shell commands run over the shell protocol (`shell,v2,raw:`) on the device's
 * transport so exit codes and stderr are real.
 */
import { EventEmitter } from 'node:events';
import type { Duplex, Readable } from 'node:stream';
import { BridgeError } from '../errors.ts';
import { parseEndpoint } from '../protocol/adb/endpoint.ts';
import {
  AdbFailError,
  type DeviceListEntry,
  diffDeviceLists,
  isConnectedMessage,
  isDisconnectedMessage,
  MAX_HOST_PAYLOAD,
  parseDeviceList,
  parseForwardList,
  parseForwardResult,
} from '../protocol/adb/host-protocol.ts';
import type { AdbServerConnector } from './connector.ts';
import { type Deadline, deadlineBudget, withDeadline } from './deadline.ts';
import { mapAdbError } from './errors.ts';
import { isForwardSpec } from './forward-target.ts';
import { HostConnection } from './host-connection.ts';
import { type ShellStream, shellStreamOver } from './shell-stream.ts';
import { pushOver } from './sync-push.ts';

export type { ShellStream } from './shell-stream.ts';

export type DeviceState = 'device' | 'offline' | 'unauthorized' | 'connecting' | 'absent' | string;

export interface AdbDevice {
  serial: string;
  state: DeviceState;
}

export interface ShellResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

export interface ShellOptions extends Deadline {
  stdin?: Uint8Array;
  /** Refuse output larger than this (default 64 MiB). */
  maxOutputBytes?: number;
}

export interface Forward {
  serial: string;
  local: string;
  remote: string;
}

const DEFAULT_TIMEOUT = 30_000;

/** The most `execOut` buffers by default (a screenshot of a large screen is a few MiB). */
export const EXEC_OUT_MAX_BYTES = 64 * 1024 * 1024;

export class AdbClient {
  readonly #connector: AdbServerConnector;

  constructor(connector: AdbServerConnector) {
    this.#connector = connector;
  }

  /** The host on which ports forwarded by the adb server are reached. */
  get host(): string {
    return this.#connector.forwardHost;
  }

  /** Where the adb server is (for messages). */
  get address(): string {
    return this.#connector.address;
  }

  /**
   * One host request on a fresh connection: send `service`, wait for `OKAY` (a `FAIL` rejects with
   * adb's message), then `read` the reply. Failures become typed BridgeErrors.
   */
  async #host<T>(
    service: string,
    deadline: Deadline,
    operation: string,
    read: (conn: HostConnection, deadline: Deadline) => Promise<T>,
    serial?: string,
    /** A failure this operation reads its own way (undefined: the usual mapping). */
    classify?: (err: unknown) => BridgeError | undefined,
  ): Promise<T> {
    const next = deadlineBudget(deadline, DEFAULT_TIMEOUT);
    let conn: HostConnection | undefined;
    try {
      conn = await HostConnection.open(this.#connector, next());
      conn.send(service);
      await conn.okay(next(), operation);
      return await read(conn, next());
    } catch (err) {
      throw classify?.(err) ?? mapAdbError(err, { operation, ...(serial ? { serial } : {}) });
    } finally {
      conn?.destroy();
    }
  }

  /**
   * Open `service` on the device's transport (`host:transport:SERIAL`, then the service); resolves
   * the socket, past adb's `OKAY`, for the caller to stream on. `next` is the operation's deadline
   * budget (deadlineBudget): the open spends from it, the caller's later steps get what remains.
   */
  async #openOnDevice(serial: string, service: string, next: () => Deadline, operation: string) {
    const conn = await HostConnection.open(this.#connector, next());
    try {
      conn.send(`host:transport:${serial}`);
      await conn.okay(next(), 'transport');
      conn.send(service);
      await conn.okay(next(), operation);
      return conn;
    } catch (err) {
      conn.destroy();
      throw err;
    }
  }

  /** `adb connect host:port`; resolves the serial adb uses for it. */
  async connect(endpoint: string, deadline: Deadline = {}): Promise<string> {
    const { endpoint: canonical } = parseEndpoint(endpoint);
    try {
      const message = await this.#host(`host:connect:${canonical}`, deadline, `connect ${endpoint}`, (c, d) =>
        c.string(d, `connect ${endpoint}`),
      );
      if (!isConnectedMessage(message.toString())) throw new Error(message.toString());
      return canonical;
    } catch (err) {
      throw mapConnectError(err, endpoint);
    }
  }

  async disconnect(endpoint: string, deadline: Deadline = {}): Promise<void> {
    const { endpoint: canonical } = parseEndpoint(endpoint);
    try {
      const message = await this.#host(`host:disconnect:${canonical}`, deadline, 'disconnect', (c, d) =>
        c.string(d, 'disconnect'),
      );
      if (!isDisconnectedMessage(message.toString())) throw new Error(message.toString());
    } catch (err) {
      const e = mapAdbError(err, { operation: 'disconnect', serial: endpoint });
      if (!/no such device|not connected/i.test(String(e.details?.['adbMessage']))) throw e;
    }
  }

  async devices(deadline: Deadline = {}): Promise<AdbDevice[]> {
    const list = await this.#host('host:devices', deadline, 'list devices', (c, d) =>
      c.string(d, 'list devices'),
    );
    return parseDeviceList(list.toString());
  }

  /** Track device state changes; `change` events carry {serial, state}. Call `stop()` to end. */
  async trackDevices(deadline: Deadline = {}): Promise<{ events: EventEmitter; stop(): void }> {
    const next = deadlineBudget(deadline, DEFAULT_TIMEOUT);
    let conn: HostConnection | undefined;
    try {
      conn = await HostConnection.open(this.#connector, next());
      conn.send('host:track-devices');
      await conn.okay(next(), 'track devices');
    } catch (err) {
      conn?.destroy();
      throw mapAdbError(err, { operation: 'track devices' });
    }
    const tracked = conn;
    const events = new EventEmitter();
    let stopped = false;
    void (async () => {
      let before: DeviceListEntry[] = [];
      try {
        for await (const update of tracked.strings()) {
          const after = parseDeviceList(update.toString());
          for (const change of diffDeviceLists(before, after)) events.emit('change', change);
          before = after;
        }
      } catch (err) {
        if (!stopped) events.emit('error', err instanceof Error ? err : new Error(String(err)));
      } finally {
        tracked.destroy();
        events.emit('end');
      }
    })();
    return {
      events,
      stop: () => {
        stopped = true;
        tracked.destroy();
      },
    };
  }

  /** Open a `shell,v2,raw:` stream on the device's transport. */
  async #openShellV2(serial: string, command: string, next: () => Deadline): Promise<HostConnection> {
    const request = `shell,v2,raw:${command}`;
    const bytes = Buffer.byteLength(request);
    if (bytes > MAX_HOST_PAYLOAD) {
      throw new BridgeError('INVALID_ARGUMENT', `shell command of ${bytes} bytes is too long`);
    }
    return this.#openOnDevice(serial, request, next, 'shell open');
  }

  /**
   * Run a command to completion: stdout, stderr, real exit code. `timeoutMs` bounds the whole call
   * (open and exit together).
   */
  async shell(serial: string, command: string, options: ShellOptions = {}): Promise<ShellResult> {
    const next = deadlineBudget(options, DEFAULT_TIMEOUT);
    const stream = await this.#shellStream(serial, command, next, options.stdin);
    const limit = options.maxOutputBytes ?? 64 * 1024 * 1024;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    const collect = (sink: Buffer[]) => (d: Buffer) => {
      size += d.length;
      if (size > limit) stream.close();
      else sink.push(d);
    };
    stream.stdout.on('data', collect(out));
    stream.stderr.on('data', collect(err));
    const exitCode = await withDeadline(stream.exit, next(), `shell ${command.slice(0, 60)}`, () =>
      stream.close(),
    );
    if (size > limit) throw new BridgeError('PAYLOAD_TOO_LARGE', `shell output exceeded ${limit} bytes`);
    if (exitCode === null) {
      throw new BridgeError('DEVICE_OFFLINE', `shell on ${serial}: stream closed before the exit status`, {
        details: {
          serial,
          command: command.slice(0, 200),
          stdoutTail: Buffer.concat(out).subarray(-200).toString(),
        },
      });
    }
    return { stdout: Buffer.concat(out), stderr: Buffer.concat(err), exitCode };
  }

  /**
   * Start a command and stream its output. The caller ends it with `close()` or by its own exit.
   * A reader that falls behind holds the device back (backpressure); nothing piles up here.
   */
  async shellStream(serial: string, command: string, options: ShellOptions = {}): Promise<ShellStream> {
    return this.#shellStream(serial, command, deadlineBudget(options, DEFAULT_TIMEOUT), options.stdin);
  }

  async #shellStream(
    serial: string,
    command: string,
    next: () => Deadline,
    stdin: Uint8Array | undefined,
  ): Promise<ShellStream> {
    let conn: HostConnection;
    try {
      conn = await this.#openShellV2(serial, command, next);
    } catch (err) {
      throw mapAdbError(err, { operation: 'shell', serial });
    }
    return shellStreamOver(conn.detach(), stdin);
  }

  /**
   * Open any device service (`shell:…`, `sync:`, `abb_exec:…`) on the device's transport and hand
   * over its socket, past adb's `OKAY`: the bytes are the service's own (the adb endpoint relays them).
   */
  async openService(serial: string, service: string, deadline: Deadline = {}): Promise<Duplex> {
    const next = deadlineBudget(deadline, DEFAULT_TIMEOUT);
    try {
      return (await this.#openOnDevice(serial, service, next, 'open service')).detach();
    } catch (err) {
      throw mapAdbError(err, { operation: 'open service', serial });
    }
  }

  /** The features the device advertised to the adb server (`shell_v2`, `cmd`, `abb_exec`, …). */
  async features(serial: string, deadline: Deadline = {}): Promise<string[]> {
    const reply = await this.#host(
      `host-serial:${serial}:features`,
      deadline,
      'features',
      (c, d) => c.string(d, 'features'),
      serial,
    );
    return reply
      .toString('utf8')
      .split(',')
      .map((f) => f.trim())
      .filter((f) => f.length > 0);
  }

  /** `exec:CMD` (what `adb exec-out` uses): raw stdout bytes, no pty, no exit status. */
  async execOut(
    serial: string,
    command: string,
    options: Deadline & { maxBytes?: number } = {},
  ): Promise<Buffer> {
    const next = deadlineBudget(options, DEFAULT_TIMEOUT);
    const maxBytes = options.maxBytes ?? EXEC_OUT_MAX_BYTES;
    let conn: HostConnection | undefined;
    try {
      conn = await this.#openOnDevice(serial, `exec:${command}`, next, 'exec open');
      return await conn.rest(next(), 'exec', {
        maxBytes,
        error: () =>
          new BridgeError(
            'HELPER_FAILED',
            `exec ${JSON.stringify(command)} on ${serial}: the output is more than ${maxBytes} bytes (the cap); stopped reading`,
            { details: { operation: 'exec', serial, maxBytes } },
          ),
      });
    } catch (err) {
      throw mapAdbError(err, { operation: 'exec', serial });
    } finally {
      conn?.destroy();
    }
  }

  /** Push a local file (or a stream) to the device over `sync:`. */
  async push(
    serial: string,
    source: string | Readable,
    remotePath: string,
    options: Deadline & { mode?: number; onProgress?: (bytes: number) => void } = {},
  ): Promise<void> {
    const next = deadlineBudget(options, 5 * 60_000);
    let socket: Duplex | undefined;
    try {
      const conn = await this.#openOnDevice(serial, 'sync:', next, 'sync open');
      const open = conn.detach();
      socket = open;
      await withDeadline(
        pushOver(open, source, remotePath, {
          mode: options.mode ?? 0o644,
          ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        }),
        next(),
        `push ${remotePath}`,
        () => open.destroy(),
      );
    } catch (err) {
      socket?.destroy();
      throw mapAdbError(err, { operation: 'push', serial });
    }
  }

  /** `adb forward LOCAL REMOTE`; LOCAL `tcp:0` lets the adb server pick a port. Resolves LOCAL as bound. */
  async forward(serial: string, local: string, remote: string, deadline: Deadline = {}): Promise<string> {
    checkForwardSpec(local);
    checkForwardSpec(remote);
    // OKAY (transport) [OKAY (result) | FAIL + message] [length-prefixed port when tcp:0 was asked].
    const port = await this.#host(
      `host-serial:${serial}:forward:${local};${remote}`,
      deadline,
      'forward',
      async (c, d) => parseForwardResult(await c.rest(d, 'forward')),
      serial,
      // A FAIL without a reason, instead of the transport's OKAY or after it: the device's transport
      // went away meanwhile.
      (err) =>
        err instanceof AdbFailError && err.adbMessage === ''
          ? new BridgeError(
              'DEVICE_OFFLINE',
              `forward on ${serial}: the adb server refused it without a reason (the device went away meanwhile)`,
              { retryable: true, details: { operation: 'forward', serial, adbMessage: '' } },
            )
          : undefined,
    );
    if (local === 'tcp:0') {
      if (port === undefined || !/^\d+$/.test(port)) {
        throw new BridgeError('INTERNAL', `adb forward returned no port: ${JSON.stringify(port ?? '')}`);
      }
      return `tcp:${port}`;
    }
    return local;
  }

  async listForwards(deadline: Deadline = {}): Promise<Forward[]> {
    const text = await this.#host('host:list-forward', deadline, 'list forwards', (c, d) =>
      c.string(d, 'list forwards'),
    );
    return parseForwardList(text.toString());
  }

  /**
   * The device's reverses (`adb reverse --list`): `reverse:list-forward` on its transport, whose
   * answer is a length-prefixed listing of `<serial> <local> <remote>` lines (after an `OKAY` on
   * some adbd versions).
   */
  async listReverses(
    serial: string,
    deadline: Deadline = {},
  ): Promise<Array<{ local: string; remote: string }>> {
    const next = deadlineBudget(deadline, DEFAULT_TIMEOUT);
    let conn: HostConnection | undefined;
    try {
      conn = await this.#openOnDevice(serial, 'reverse:list-forward', next, 'list reverses');
      return parseReverseList(await conn.rest(next(), 'list reverses'));
    } catch (err) {
      throw mapAdbError(err, { operation: 'list reverses', serial });
    } finally {
      conn?.destroy();
    }
  }

  /** `adb reverse --remove LOCAL`; a reverse that is already gone is not an error. */
  async removeReverse(serial: string, local: string, deadline: Deadline = {}): Promise<void> {
    checkForwardSpec(local);
    const next = deadlineBudget(deadline, DEFAULT_TIMEOUT);
    let conn: HostConnection | undefined;
    try {
      conn = await this.#openOnDevice(serial, `reverse:killforward:${local}`, next, 'remove reverse');
      await conn.rest(next(), 'remove reverse');
    } catch (err) {
      throw mapAdbError(err, { operation: 'remove reverse', serial });
    } finally {
      conn?.destroy();
    }
  }

  async removeForward(serial: string, local: string, deadline: Deadline = {}): Promise<void> {
    checkForwardSpec(local);
    await this.#host(
      `host-serial:${serial}:killforward:${local}`,
      deadline,
      'remove forward',
      async (c, d) => parseForwardResult(await c.rest(d, 'remove forward')),
      serial,
    );
  }
}

/** A `reverse:list-forward` answer: [`OKAY`] + 4 hex digits of length + `<serial> <local> <remote>` lines. */
export function parseReverseList(bytes: Buffer): Array<{ local: string; remote: string }> {
  let text = bytes.toString('utf8');
  if (text.startsWith('OKAY')) text = text.slice(4);
  if (/^[0-9a-fA-F]{4}/.test(text)) text = text.slice(4, 4 + Number.parseInt(text.slice(0, 4), 16));
  const out: Array<{ local: string; remote: string }> = [];
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 3) continue;
    const [local, remote] = cols.slice(-2) as [string, string];
    if (isForwardSpec(local)) out.push({ local, remote });
  }
  return out;
}

function checkForwardSpec(spec: string): void {
  if (!isForwardSpec(spec)) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `forward endpoint ${JSON.stringify(spec)} must be tcp:PORT, localabstract:NAME or localfilesystem:/PATH`,
    );
  }
}

function mapConnectError(err: unknown, endpoint: string): BridgeError {
  const e = mapAdbError(err, { operation: 'connect', serial: endpoint });
  if (e.code === 'INTERNAL') {
    return new BridgeError(
      'DEVICE_OFFLINE',
      `cannot connect to ${endpoint}: ${e.details?.['adbMessage'] ?? e.message}`,
      {
        details: e.details ?? {},
      },
    );
  }
  return e;
}
