/**
 * Persistent helper session: `am instrument -w -e sessionPort P ... RUNNER` held open as a shell
 * stream, reached through a forward to `tcp:P` (recorded in the forward ledger): from a unix socket
 * of the bridge's own adb server (`localfilesystem:`), or `tcp:L` on an external one. Ready when a
 * status record says `sessionReady=true`. One command per connection, each with a unique request id.
 * Closing sends `quit`, waits briefly, force-stops the package and removes the forward.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type { ShellStream } from '../../adb/client.ts';
import { requestDeadline } from '../../adb/deadline.ts';
import type { ForwardEntry } from '../../adb/forward-ledger.ts';
import type { ForwardTarget } from '../../adb/forward-target.ts';
import { BridgeError } from '../../errors.ts';
import type { HelperManifest } from '../../manifest/index.ts';
import { InstrumentationOutputParser } from '../../protocol/helper/instrumentation-output.ts';
import {
  buildSessionRequest,
  parseSessionResponse,
  type SessionCommand,
  type SessionResponse,
} from '../../protocol/helper/session-frames.ts';
import { buildInstrumentCommand, type CaptureOptions } from './capture-options.ts';
import type { HelperDevice } from './device.ts';
import { forceStopInTurn, instrumentationLock } from './one-shot.ts';

export type SessionSuccess = Extract<SessionResponse, { ok: true }>;

export interface SessionStartOptions {
  capture: CaptureOptions;
  /** Owner for the forward ledger (a lease id); the session id is used when absent. */
  owner?: string;
  /** Device-side port; random in 20000–39999 when absent. */
  devicePort?: number;
  readyTimeoutMs?: number;
  /** Abandons the start (the session is closed: helper stopped, forward removed). */
  signal?: AbortSignal;
}

export interface SessionRequestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

function cancelled(signal: AbortSignal, what: string): unknown {
  return signal.reason instanceof BridgeError
    ? signal.reason
    : new BridgeError('TIMEOUT', `${what}: aborted`);
}

let requestCounter = 0;

export class HelperSession {
  readonly id = `session-${randomBytes(6).toString('hex')}`;
  readonly manifest: HelperManifest;
  readonly capture: CaptureOptions;
  readonly #device: HelperDevice;
  #stream: ShellStream | undefined;
  #forward: ForwardEntry | undefined;
  /** Where each command connects (the forward's local side). */
  #target: ForwardTarget | undefined;
  #closed = false;
  #exited = false;
  #exitInfo: string | undefined;

  private constructor(device: HelperDevice, manifest: HelperManifest, capture: CaptureOptions) {
    this.#device = device;
    this.manifest = manifest;
    this.capture = capture;
  }

  static async start(
    device: HelperDevice,
    manifest: HelperManifest,
    options: SessionStartOptions,
  ): Promise<HelperSession> {
    const session = new HelperSession(device, manifest, options.capture);
    try {
      await session.#start(options);
      return session;
    } catch (err) {
      await session.close().catch(() => undefined);
      throw err;
    }
  }

  get alive(): boolean {
    return !this.#closed && !this.#exited;
  }

  async #start(options: SessionStartOptions): Promise<void> {
    const runner = this.manifest.instrumentationRunner;
    if (runner === undefined)
      throw new BridgeError(
        'INVALID_ARGUMENT',
        `manifest ${this.manifest.name} has no instrumentationRunner`,
      );
    const devicePort = options.devicePort ?? 20000 + Math.floor(Math.random() * 20000);
    const { signal } = options;
    const readyTimeout = options.readyTimeoutMs ?? this.capture.timeoutMs + 10_000;
    const stepTimeout = Math.min(10_000, readyTimeout);
    if (signal?.aborted) throw cancelled(signal, 'helper session start');
    // Not cancelled by the signal: abandoning a forward request adb may already have carried out
    // would leave a forward nobody knows about. It is short and has its own timeout.
    this.#forward = await this.#device.openForward(options.owner ?? this.id, `tcp:${devicePort}`, {
      timeoutMs: stepTimeout,
    });
    this.#target = this.#device.forwardTarget(this.#forward);
    if (signal?.aborted) throw cancelled(signal, 'helper session start');
    // The instrumentation starts in its turn (a one-shot run of the package would be killed by it);
    // the wait counts against the ready timeout.
    const ready = requestDeadline({ deadlineMs: readyTimeout });
    await this.#device.locks
      .withExclusive(
        this.#device.serial,
        instrumentationLock(this.manifest.packageName),
        () => {
          const left = ready.remainingMs();
          return this.#launch(runner, devicePort, left, Math.min(stepTimeout, left), signal);
        },
        { timeoutMs: readyTimeout, ...(signal ? { signal } : {}) },
      )
      .catch((err: unknown) => {
        if (signal?.aborted) throw cancelled(signal, 'helper session start');
        throw err;
      });
  }

  /** Start the instrumentation and wait until it says it is ready. */
  async #launch(
    runner: string,
    devicePort: number,
    readyTimeout: number,
    stepTimeout: number,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const command = buildInstrumentCommand({ runner, capture: this.capture, sessionPort: devicePort });
    const stream = await this.#device.shellStream(command, {
      timeoutMs: stepTimeout,
      ...(signal ? { signal } : {}),
    });
    this.#stream = stream;
    if (signal?.aborted) throw cancelled(signal, 'helper session start');

    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(cancelled(signal!, 'helper session start'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const parser = new InstrumentationOutputParser({
        retainStatuses: false,
        onStatus: (status) => {
          if (status.fields['sessionReady'] === 'true') {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            resolve();
          }
        },
      });
      const timer = setTimeout(() => {
        reject(
          new BridgeError(
            'TIMEOUT',
            `helper session on ${this.#device.serial} not ready within ${readyTimeout} ms`,
          ),
        );
      }, readyTimeout);
      stream.stdout.on('data', (d: Buffer) => parser.push(d));
      void stream.exit.then(() => {
        this.#exited = true;
        const out = parser.end();
        this.#exitInfo =
          out.result['shortMsg'] ?? out.result['message'] ?? out.statuses[0]?.fields['Error'] ?? 'exited';
        clearTimeout(timer);
        reject(
          new BridgeError(
            'HELPER_FAILED',
            `helper session on ${this.#device.serial} ended before it was ready: ${this.#exitInfo}`,
            {
              details: { result: out.result, failed: out.failed },
            },
          ),
        );
      });
    });
  }

  /** Send one command on a fresh connection and parse the response. */
  async request(
    command: Exclude<SessionCommand, 'quit'>,
    payloadBase64?: string,
    options: SessionRequestOptions = {},
  ): Promise<SessionSuccess> {
    if (!this.alive) {
      throw new BridgeError(
        'HELPER_FAILED',
        `helper session ${this.id} is not running${this.#exitInfo ? `: ${this.#exitInfo}` : ''}`,
      );
    }
    return this.#send(
      command,
      payloadBase64,
      options.timeoutMs ?? this.capture.timeoutMs + 5_000,
      options.signal,
    );
  }

  async #send(
    command: SessionCommand,
    payloadBase64: string | undefined,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<SessionSuccess> {
    const requestId = `r${process.pid.toString(36)}-${(++requestCounter).toString(36)}`;
    const line = buildSessionRequest(command, requestId, payloadBase64);
    const target = this.#target;
    if (target === undefined) throw new BridgeError('HELPER_FAILED', 'session has no forward');
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      const socket = net.connect(target);
      const chunks: Buffer[] = [];
      // The command's deadline and the caller's cancellation, as one signal.
      const deadline = requestDeadline({
        deadlineMs: timeoutMs,
        signals: [signal],
        expired: () =>
          new BridgeError('TIMEOUT', `helper session ${command} got no response within ${timeoutMs} ms`),
      });
      const finish = () => {
        deadline.dispose();
        deadline.signal.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        finish();
        socket.destroy();
        reject(deadline.timedOut ? deadline.signal.reason : cancelled(signal!, `helper session ${command}`));
      };
      if (deadline.signal.aborted) {
        onAbort();
        return;
      }
      deadline.signal.addEventListener('abort', onAbort, { once: true });
      socket.on('connect', () => socket.write(line));
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('end', () => {
        finish();
        resolve(Buffer.concat(chunks));
      });
      socket.on('error', (err) => {
        finish();
        reject(new BridgeError('HELPER_FAILED', `helper session connection failed: ${err.message}`));
      });
    });
    if (bytes.length === 0) {
      // Nothing listens behind the forward any more: the helper process is gone.
      this.#exited = true;
      this.#exitInfo = 'the helper closed the connection without a response';
      throw new BridgeError('HELPER_FAILED', `helper session ${this.id}: ${this.#exitInfo}`, {
        details: { reason: 'session-gone', command },
      });
    }
    const response = parseSessionResponse(bytes, { requestId, command });
    if (!response.ok) {
      // A stale or garbled response means the session's state is unknown: end it.
      if (response.error.code === 'HELPER_PROTOCOL_ERROR') void this.close();
      throw response.error;
    }
    return response;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#exited && this.#forward) {
      await this.#send('quit', undefined, 2000).catch(() => undefined);
      await Promise.race([this.#stream?.exit, new Promise((r) => setTimeout(r, 1000))]);
    }
    this.#stream?.close();
    await forceStopInTurn(this.#device, this.manifest.packageName);
    if (this.#forward) await this.#device.closeForward(this.#forward).catch(() => undefined);
  }
}
