/**
 * The only place that talks to adbkit. Every operation takes a deadline and returns native
 * promises; failures become typed BridgeErrors (errors.ts). Shell commands run over the shell
 * protocol (`shell,v2,raw:`) on the device's transport so exit codes and stderr are real.
 */
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { PassThrough, type Readable } from 'node:stream';
import { BridgeError } from '../errors.ts';
import { type Deadline, withDeadline } from './deadline.ts';
import { mapAdbError } from './errors.ts';
import {
  encodeShellPacket,
  SHELL_CLOSE_STDIN,
  SHELL_EXIT,
  SHELL_STDERR,
  SHELL_STDIN,
  SHELL_STDOUT,
  ShellPacketDecoder,
} from './shell-protocol.ts';

// adbkit is CommonJS without named ESM exports; load it once through require.
const AdbKit = (
  createRequire(import.meta.url)('@devicefarmer/adbkit') as typeof import('@devicefarmer/adbkit')
).Adb;
type Client = ReturnType<typeof AdbKit.createClient>;

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

/** A running shell command whose output is consumed as it arrives (held instrumentation). */
export interface ShellStream {
  stdout: Readable;
  stderr: Readable;
  /** Resolves with the exit code, or null when the stream closed without one. */
  exit: Promise<number | null>;
  close(): void;
}

export interface Forward {
  serial: string;
  local: string;
  remote: string;
}

const DEFAULT_TIMEOUT = 30_000;
/**
 * What adbkit gets as its adb binary: a path below /dev/null can never exist, so its auto-start
 * (`start-server` on ECONNREFUSED) fails with ENOTDIR and the call fails UNAVAILABLE instead.
 */
export const NO_AUTOSTART_BIN = '/dev/null/devicebridge-never-starts-adb';
/** How long the rest of a `FAIL` reply (its message) may take once the status arrived. */
const FAIL_REST_MS = 2000;

/** adbkit's PushTransfer/PullTransfer, as far as we use them. */
interface Transfer extends EventEmitter {
  cancel(): boolean;
}

function hex4(n: number): string {
  return n.toString(16).padStart(4, '0');
}

export class AdbClient extends EventEmitter {
  readonly #client: Client;
  readonly host: string;
  readonly port: number;

  constructor(options: { host?: string; port: number }) {
    super();
    this.host = options.host ?? '127.0.0.1';
    this.port = options.port;
    // adbkit answers ECONNREFUSED by running `<bin> -P <port> start-server`: a fresh, empty daemon
    // behind the bridge's back. Only the AdbServer manager starts adb, so that must always fail.
    this.#client = AdbKit.createClient({ host: this.host, port: this.port, bin: NO_AUTOSTART_BIN });
  }

  /** `adb connect host:port`; resolves the serial adb uses for it. */
  async connect(endpoint: string, deadline: Deadline = {}): Promise<string> {
    const { host, port } = splitEndpoint(endpoint);
    try {
      return await withDeadline(
        this.#client.connect(host, port),
        { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
        `connect ${endpoint}`,
      );
    } catch (err) {
      throw mapConnectError(err, endpoint);
    }
  }

  async disconnect(endpoint: string, deadline: Deadline = {}): Promise<void> {
    const { host, port } = splitEndpoint(endpoint);
    try {
      await withDeadline(
        this.#client.disconnect(host, port),
        { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
        `disconnect ${endpoint}`,
      );
    } catch (err) {
      const e = mapAdbError(err, { operation: 'disconnect', serial: endpoint });
      if (!/no such device|not connected/i.test(String(e.details?.['adbMessage']))) throw e;
    }
  }

  async devices(deadline: Deadline = {}): Promise<AdbDevice[]> {
    try {
      const list = await withDeadline<Array<{ id: string; type: string }>>(
        this.#client.listDevices(),
        { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
        'list devices',
      );
      return list.map((d) => ({ serial: d.id, state: d.type }));
    } catch (err) {
      throw mapAdbError(err, { operation: 'list devices' });
    }
  }

  /** Track device state changes; `change` events carry {serial, state}. Call `stop()` to end. */
  async trackDevices(deadline: Deadline = {}): Promise<{ events: EventEmitter; stop(): void }> {
    const pending = this.#client.trackDevices();
    let tracker: Awaited<typeof pending>;
    try {
      tracker = await withDeadline(
        pending,
        { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
        'track devices',
        () =>
          // A tracker that opens after the deadline is ended at once.
          void Promise.resolve(pending).then(
            (late) => late.end(),
            () => undefined,
          ),
      );
    } catch (err) {
      throw mapAdbError(err, { operation: 'track devices' });
    }
    const events = new EventEmitter();
    const emit = (d: { id: string; type: string }) => events.emit('change', { serial: d.id, state: d.type });
    tracker.on('add', emit);
    tracker.on('change', emit);
    tracker.on('remove', (d: { id: string }) => events.emit('change', { serial: d.id, state: 'absent' }));
    tracker.on('end', () => events.emit('end'));
    tracker.on('error', (err: Error) => events.emit('error', err));
    return { events, stop: () => tracker.end() };
  }

  async features(serial: string, deadline: Deadline = {}): Promise<Record<string, string | boolean>> {
    try {
      return (await withDeadline(
        this.#client.getDevice(serial).getFeatures(),
        { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
        'features',
      )) as Record<string, string | boolean>;
    } catch (err) {
      throw mapAdbError(err, { operation: 'features', serial });
    }
  }

  /** Open the device's transport and a `shell,v2,raw:` stream on it; resolves the raw socket. */
  async #openShellV2(serial: string, command: string, deadline: Deadline): Promise<Socket> {
    const connection = await withDeadline<{ socket: unknown }>(
      this.#client.getDevice(serial).transport(),
      { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
      'transport',
    );
    const socket = connection.socket as Socket;
    const request = `shell,v2,raw:${command}`;
    const bytes = Buffer.byteLength(request);
    if (bytes > 0xffff) {
      socket.destroy();
      throw new BridgeError('INVALID_ARGUMENT', `shell command of ${bytes} bytes is too long`);
    }
    socket.write(`${hex4(bytes)}${request}`);
    const reply = await withDeadline(
      readExactly(socket, 4),
      { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
      'shell open',
      () => socket.destroy(),
    );
    if (reply.toString('latin1') !== 'OKAY') {
      // `FAIL` + hex4 length + message; the server closes after it. readExactly paused the socket:
      // read the rest flowing, and never longer than the deadline (or FAIL_REST_MS) allows.
      const rest = await withDeadline(
        readAll(socket),
        { timeoutMs: Math.min(deadline.timeoutMs ?? DEFAULT_TIMEOUT, FAIL_REST_MS), signal: deadline.signal },
        'shell open',
        () => socket.destroy(),
      ).catch(() => Buffer.alloc(0));
      socket.destroy();
      throw mapAdbError(new Error(`${reply.toString('latin1')}${rest.subarray(4).toString()}`), {
        operation: 'shell',
        serial,
      });
    }
    return socket;
  }

  /** Run a command to completion: stdout, stderr, real exit code. */
  async shell(serial: string, command: string, options: ShellOptions = {}): Promise<ShellResult> {
    const stream = await this.shellStream(serial, command, options);
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
    const exitCode = await withDeadline(
      stream.exit,
      { timeoutMs: DEFAULT_TIMEOUT, ...options },
      `shell ${command.slice(0, 60)}`,
      () => stream.close(),
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

  /** Start a command and stream its output. The caller ends it with `close()` or by its own exit. */
  async shellStream(serial: string, command: string, options: ShellOptions = {}): Promise<ShellStream> {
    let socket: Socket;
    try {
      socket = await this.#openShellV2(serial, command, options);
    } catch (err) {
      throw mapAdbError(err, { operation: 'shell', serial });
    }
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const decoder = new ShellPacketDecoder();
    let exitCode: number | null = null;
    const exit = new Promise<number | null>((resolve) => {
      let finished = false;
      // Resolve once the output is delivered to whoever reads it: at the exit packet, without
      // waiting for the stream's close to travel back through the adb server.
      const done = () => {
        if (finished) return;
        finished = true;
        stdout.end();
        stderr.end();
        const drained = (s: PassThrough) =>
          s.readableFlowing ? new Promise<void>((r) => s.once('end', () => r())) : Promise.resolve();
        void Promise.all([drained(stdout), drained(stderr)]).then(() => resolve(exitCode));
      };
      socket.on('data', (chunk: Buffer) => {
        let packets: ReturnType<ShellPacketDecoder['push']>;
        try {
          packets = decoder.push(chunk);
        } catch {
          // Unexpected bytes: the stream's state is unknown, destroy it.
          socket.destroy();
          return;
        }
        for (const p of packets) {
          if (p.id === SHELL_STDOUT) stdout.write(p.data);
          else if (p.id === SHELL_STDERR) stderr.write(p.data);
          else if (p.id === SHELL_EXIT) {
            exitCode = p.data[0] ?? 0;
            socket.end();
            done();
          }
        }
      });
      socket.once('close', done);
      socket.once('error', () => socket.destroy());
      socket.resume();
    });
    if (options.stdin !== undefined) {
      for (let i = 0; i < options.stdin.length; i += 64 * 1024) {
        socket.write(encodeShellPacket(SHELL_STDIN, options.stdin.subarray(i, i + 64 * 1024)));
      }
    }
    socket.write(encodeShellPacket(SHELL_CLOSE_STDIN));
    return { stdout, stderr, exit, close: () => socket.destroy() };
  }

  /** `exec:CMD` (what `adb exec-out` uses): raw stdout bytes, no pty, no exit status. */
  async execOut(serial: string, command: string, deadline: Deadline = {}): Promise<Buffer> {
    let socket: Socket | undefined;
    try {
      const connection = await withDeadline<{ socket: unknown }>(
        this.#client.getDevice(serial).transport(),
        { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
        'transport',
      );
      const s = connection.socket as Socket;
      socket = s;
      const request = `exec:${command}`;
      s.write(`${hex4(Buffer.byteLength(request))}${request}`);
      const reply = await withDeadline(
        readExactly(s, 4),
        { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
        'exec open',
        () => s.destroy(),
      );
      if (reply.toString('latin1') !== 'OKAY') throw new Error(`exec refused: ${reply.toString('latin1')}`);
      const body = readAll(s);
      return await withDeadline(body, { timeoutMs: DEFAULT_TIMEOUT, ...deadline }, 'exec', () => s.destroy());
    } catch (err) {
      socket?.destroy();
      throw mapAdbError(err, { operation: 'exec', serial });
    }
  }

  /** Push a local file to the device (adbkit sync). */
  async push(
    serial: string,
    source: string | Readable,
    remotePath: string,
    options: Deadline & { mode?: number; onProgress?: (bytes: number) => void } = {},
  ): Promise<void> {
    try {
      const transfer = await withDeadline<Transfer>(
        this.#client.getDevice(serial).push(source, remotePath, options.mode ?? 0o644),
        { timeoutMs: DEFAULT_TIMEOUT, ...options },
        'push',
      );
      await withDeadline(
        new Promise<void>((resolve, reject) => {
          transfer.on('progress', (s: { bytesTransferred: number }) =>
            options.onProgress?.(s.bytesTransferred),
          );
          transfer.on('end', resolve);
          transfer.on('error', reject);
        }),
        { timeoutMs: 5 * 60_000, ...options },
        `push ${remotePath}`,
        () => transfer.cancel(),
      );
    } catch (err) {
      throw mapAdbError(err, { operation: 'push', serial });
    }
  }

  /** Pull a file into memory (small files only: settings, test artefacts). */
  async pull(serial: string, remotePath: string, deadline: Deadline = {}): Promise<Buffer> {
    try {
      const transfer = await withDeadline<Transfer>(
        this.#client.getDevice(serial).pull(remotePath),
        { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
        'pull',
      );
      const chunks: Buffer[] = [];
      await withDeadline(
        new Promise<void>((resolve, reject) => {
          transfer.on('data', (d: Buffer) => chunks.push(d));
          transfer.on('end', resolve);
          transfer.on('error', reject);
        }),
        { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
        `pull ${remotePath}`,
        () => transfer.cancel(),
      );
      return Buffer.concat(chunks);
    } catch (err) {
      throw mapAdbError(err, { operation: 'pull', serial });
    }
  }

  /** `adb forward LOCAL REMOTE`; LOCAL `tcp:0` lets the adb server pick a port. Resolves LOCAL as bound. */
  async forward(serial: string, local: string, remote: string, deadline: Deadline = {}): Promise<string> {
    checkForwardSpec(local);
    checkForwardSpec(remote);
    const reply = await this.#hostCommand(
      `host-serial:${serial}:forward:${local};${remote}`,
      deadline,
      'forward',
      serial,
    );
    // OKAY (transport) OKAY (result) [hex4 length + port when tcp:0 was asked].
    if (local === 'tcp:0') {
      const m = /^OKAY(?:OKAY)?([0-9a-f]{4})(\d+)/i.exec(reply.toString('latin1'));
      if (!m)
        throw new BridgeError(
          'INTERNAL',
          `adb forward returned no port: ${reply.toString('latin1').slice(0, 40)}`,
        );
      return `tcp:${m[2]}`;
    }
    return local;
  }

  async listForwards(deadline: Deadline = {}): Promise<Forward[]> {
    const reply = await this.#hostCommand('host:list-forward', deadline, 'list forwards');
    const text = reply.subarray(8).toString();
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        const [serial = '', local = '', remote = ''] = l.trim().split(/\s+/);
        return { serial, local, remote };
      });
  }

  async removeForward(serial: string, local: string, deadline: Deadline = {}): Promise<void> {
    checkForwardSpec(local);
    await this.#hostCommand(`host-serial:${serial}:killforward:${local}`, deadline, 'remove forward', serial);
  }

  /** Send one host-service request on a fresh connection; resolves everything the server sent. */
  async #hostCommand(
    request: string,
    deadline: Deadline,
    operation: string,
    serial?: string,
  ): Promise<Buffer> {
    let socket: Socket | undefined;
    try {
      const connection = await withDeadline<{ socket: unknown }>(
        this.#client.connection(),
        { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
        operation,
      );
      socket = connection.socket as Socket;
      socket.write(`${hex4(Buffer.byteLength(request))}${request}`);
      const reply = await withDeadline(
        readAll(socket),
        { timeoutMs: DEFAULT_TIMEOUT, ...deadline },
        operation,
        () => socket?.destroy(),
      );
      const text = reply.toString('latin1');
      const fail = text.indexOf('FAIL');
      if (fail >= 0) {
        const len = Number.parseInt(text.slice(fail + 4, fail + 8), 16);
        throw new Error(Number.isFinite(len) ? text.slice(fail + 8, fail + 8 + len) : text.slice(fail + 4));
      }
      if (!text.startsWith('OKAY')) throw new Error(`unexpected reply ${JSON.stringify(text.slice(0, 16))}`);
      return reply;
    } catch (err) {
      socket?.destroy();
      throw mapAdbError(err, { operation, ...(serial ? { serial } : {}) });
    }
  }
}

function checkForwardSpec(spec: string): void {
  if (!/^(tcp:\d{1,5}|localabstract:[A-Za-z0-9._-]{1,100})$/.test(spec)) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `forward endpoint ${JSON.stringify(spec)} must be tcp:PORT or localabstract:NAME`,
    );
  }
}

export function splitEndpoint(endpoint: string): { host: string; port: number } {
  const m = /^([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(endpoint);
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || port < 1 || port > 65535) {
    throw new BridgeError('INVALID_ARGUMENT', `endpoint ${JSON.stringify(endpoint)} must be host:port`);
  }
  // IPv6 hosts keep their brackets: adb's `host:connect:HOST:PORT` needs them to find the port.
  return { host: m[1]!, port };
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

/**
 * Everything until the peer closes. Callers bound it with `withDeadline`. The socket is resumed:
 * a socket `readExactly` paused would otherwise never deliver its data nor its end.
 */
function readAll(socket: Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.once('end', () => resolve(Buffer.concat(chunks)));
    socket.once('close', () => resolve(Buffer.concat(chunks)));
    socket.once('error', reject);
    socket.resume();
  });
}

function readExactly(socket: Socket, n: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= n) {
        // Pause before giving the socket back: bytes after the reply must wait for the next reader.
        socket.pause();
        socket.off('data', onData);
        socket.off('close', onClose);
        if (buf.length > n) socket.unshift(buf.subarray(n));
        resolve(buf.subarray(0, n));
      }
    };
    const onClose = () => reject(new Error('closed'));
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.once('error', reject);
  });
}
