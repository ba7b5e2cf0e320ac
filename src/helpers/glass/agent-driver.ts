/**
 * The glass agent on one device (the glass contract): the dex jar pushed to its `devicePath` (skipped when the
 * device already holds the same bytes; verified by sha256 after a push), started with
 * `CLASSPATH=<devicePath> app_process / <mainClass>` on a held shell stream, reached through a
 * forward `tcp:0` → `localabstract:<socketName>` owned by the lease in the forward ledger, and ready
 * only once the banner and a `ping` answered (a forward accepts connections with nothing listening).
 *
 * A stale agent (left by a bridge that crashed) holds the socket: the new one exits with "Address
 * already in use"; it is killed (`pkill -f` its main class, literally) and the agent started again, once. A
 * request whose connection broke (protocol error, drop, deadline) rejects with a retryable error;
 * the next request reconnects, and starts the agent again when its process has exited — or kills and
 * starts it again when it runs but does not answer on its socket within the readiness bound. A device
 * whose adb transport ended and came back (or an adb server that was restarted) has neither the
 * agent's forward nor, usually, its process: the reconnect opens the forward anew through the ledger
 * (the lost one forgotten, never left stale) and starts the agent again, within that request's deadline.
 */
import type { ShellStream } from '../../adb/client.ts';
import { quoteShellArg, shellCommand } from '../../adb/shell-quote.ts';
import { BridgeError } from '../../errors.ts';
import type { AppProcessJarManifest } from '../../manifest/index.ts';
import type { Logger } from '../../observability/logger.ts';
import type { GlassReply } from '../../protocol/glass/line-protocol.ts';
import { parseSha256sum } from '../../protocol/helper/package-manager.ts';
import type { HelperDevice } from '../snapshot/device.ts';
import { GlassEndpoint, type GlassLineClient, type StartFailure } from './line-client.ts';

export interface GlassAgentOptions {
  device: HelperDevice;
  manifest: AppProcessJarManifest;
  /** The jar on this host, already verified against `manifest.sha256` (the artifact cache's file). */
  jarPath: string;
  /** Who owns the forward in the ledger (the lease id). */
  owner: string;
  logger?: Logger;
  /** Readiness: retry every `intervalMs` up to `readyTimeoutMs` (defaults 200 ms, 5 s). */
  intervalMs?: number;
  readyTimeoutMs?: number;
  /** Per-request deadline (default 30 s). */
  requestTimeoutMs?: number;
}

export interface AgentStart {
  /** Whether the jar was pushed (false: the device already held the same bytes). */
  pushed: boolean;
  /** Whether a stale agent held the socket and was killed first. */
  killedStale: boolean;
}

const ADDRESS_IN_USE = /Address already in use/;

/** `text` as an extended regular expression matching exactly `text` (toybox compiles pkill's pattern as an ERE). */
export function ereLiteral(text: string): string {
  return text.replace(/[\\.[\]{}()*+?^$|]/g, '\\$&');
}

/**
 * Stop every glass agent process of the given main classes on the device (`pkill -f` with each
 * class matched literally, `|` between them): the one way the bridge kills an agent — a stale one
 * holding the socket, the lease's own at close (closing its shell is a hang-up a real device's agent
 * may outlive), those a dead node left. Resolves whether a process was killed (pkill's exit 0; 1
 * means none ran); false without asking the device when no class is named.
 */
export async function stopGlassAgentProcesses(
  device: Pick<HelperDevice, 'shell'>,
  mainClasses: readonly string[],
  timeoutMs = 10_000,
): Promise<boolean> {
  if (mainClasses.length === 0) return false;
  const pattern = mainClasses.map(ereLiteral).join('|');
  const result = await device.shell(shellCommand('pkill', '-f', pattern), { timeoutMs });
  return result.exitCode === 0;
}
/**
 * The agent's jar on the device, by sha256: pushed only when missing or different, verified after
 * (CHECKSUM_MISMATCH otherwise). Resolves whether it was pushed. The line-protocol agent and its
 * encoder mode (src/helpers/screen/) share it.
 */
export async function ensureAgentJar(
  device: Pick<HelperDevice, 'serial' | 'shell' | 'push'>,
  manifest: Pick<AppProcessJarManifest, 'devicePath' | 'sha256'>,
  jarPath: string,
): Promise<boolean> {
  const onDevice = async (): Promise<string | null> => {
    const result = await device.shell(shellCommand('sha256sum', manifest.devicePath), { timeoutMs: 30_000 });
    return result.exitCode === 0 ? parseSha256sum(result.stdout.toString('utf8')) : null;
  };
  if ((await onDevice()) === manifest.sha256) return false;
  await device.push(jarPath, manifest.devicePath, { timeoutMs: 120_000 });
  const after = await onDevice();
  if (after !== manifest.sha256) {
    throw new BridgeError(
      'CHECKSUM_MISMATCH',
      `${manifest.devicePath} on ${device.serial} has sha256 ${after ?? 'unknown'} after the push, not ${manifest.sha256}`,
      { details: { serial: device.serial, devicePath: manifest.devicePath } },
    );
  }
  return true;
}

/** `work`, or the error `late()` makes once `deadlineAt` (performance.now() time) has passed. */
async function withinDeadline<T>(work: Promise<T>, deadlineAt: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(late()), Math.max(0, deadlineAt - performance.now()));
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** An agent still running this long after its start, silent or not, counts as started. */
const STARTUP_QUIET_MS = 2000;

export class GlassAgent {
  readonly #o: GlassAgentOptions;
  #shell: ShellStream | null = null;
  #exited = true;
  readonly #endpoint: GlassEndpoint;
  #client: GlassLineClient | null = null;
  #closed = false;
  /** The reconnect in progress: concurrent requests wait for one, never start a second agent. */
  #reconnecting: Promise<void> | null = null;
  /** A process was started (it may have exited since): close kills what may still run. */
  #launched = false;
  /** Close has killed the agent's processes. */
  #killed = false;

  private constructor(options: GlassAgentOptions) {
    this.#o = options;
    this.#endpoint = new GlassEndpoint(
      options.device,
      options.owner,
      options.manifest.socketName,
      'glass-agent',
    );
  }

  /** Push (when needed), start and connect; resolves once the agent answered `ping`. */
  static async start(options: GlassAgentOptions): Promise<{ agent: GlassAgent; start: AgentStart }> {
    const agent = new GlassAgent(options);
    try {
      const pushed = await agent.#ensureJar();
      const killedStale = await agent.#launch();
      await agent.#connect();
      return { agent, start: { pushed, killedStale } };
    } catch (err) {
      await agent.close();
      throw err;
    }
  }

  /**
   * One request, answered within the request deadline (`requestTimeoutMs`) whatever it takes; a
   * broken connection rejects it (retryable) and is re-established by the next: the agent started
   * again when its process has exited, the forward opened anew when the adb server lost it (see
   * GlassEndpoint), all within that request's deadline.
   */
  async request(op: string, fields: Record<string, unknown> = {}): Promise<GlassReply> {
    this.#refuseClosed();
    const timeoutMs = this.#o.requestTimeoutMs ?? 30_000;
    const deadlineAt = performance.now() + timeoutMs;
    if (this.#client === null || this.#client.closed) {
      this.#reconnecting ??= (async () => {
        if (this.#exited) await this.#launch();
        // The agent may have died with the last request while its shell's end has not reached us
        // yet: when it ends while being reached, start it again instead of waiting for nothing.
        const ended = new AbortController();
        void this.#shell?.exit.then(() => ended.abort());
        try {
          await this.#connect(deadlineAt, ended.signal);
        } catch (err) {
          if (this.#closed) throw err;
          // Running but not answering on its socket (its accept loop died): stop it, start anew.
          if (!this.#exited) await this.#stopUnresponsive();
          await this.#launch();
          await this.#connect(deadlineAt);
        }
      })().finally(() => {
        this.#reconnecting = null;
      });
      await withinDeadline(
        this.#reconnecting,
        deadlineAt,
        () =>
          new BridgeError(
            'TIMEOUT',
            `the glass agent on ${this.#o.device.serial} was not reachable within the request deadline of ${timeoutMs} ms`,
            { retryable: true, details: { component: 'glass-agent', op, timeoutMs } },
          ),
      );
      this.#refuseClosed();
    }
    return (this.#client as GlassLineClient).request(op, fields, {
      timeoutMs: Math.max(1, Math.ceil(deadlineAt - performance.now())),
    });
  }

  /** Whether the connection to the agent is open (a request now needs no reconnect). */
  get connected(): boolean {
    return this.#client !== null && !this.#client.closed;
  }

  /** Whether the agent's process is still running (its held shell has not ended). */
  get running(): boolean {
    return !this.#exited;
  }

  /**
   * Disconnect, stop the agent and remove the forward. Idempotent. A start or relaunch in progress
   * notices the close after its next step and stops what that step created. Closing the agent's
   * shell is only a hang-up, which a device's agent may outlive: a process this driver started is
   * killed too (`stopGlassAgentProcesses`). A device that does not answer then is only logged: an
   * agent it still runs is killed by the next start, which finds the socket taken.
   */
  async close(): Promise<void> {
    const started = this.#shell !== null || this.#launched;
    this.#closed = true;
    this.#client?.close();
    this.#client = null;
    this.#shell?.close();
    this.#shell = null;
    await this.#endpoint.close();
    if (started && !this.#killed) {
      this.#killed = true;
      await stopGlassAgentProcesses(this.#o.device, [this.#o.manifest.mainClass], 5000).catch((err: Error) =>
        this.#o.logger?.warn(
          { serial: this.#o.device.serial, err: err.message },
          'glass agent: could not kill its process on the device',
        ),
      );
    }
  }

  /**
   * The agent's process runs but could not be reached within the readiness bound: hang up its shell
   * and kill it (a device's agent may outlive the hang-up), so the next launch owns the socket.
   */
  async #stopUnresponsive(): Promise<void> {
    const { device, manifest } = this.#o;
    this.#o.logger?.warn(
      { serial: device.serial },
      'glass agent: running but not answering; starting it again',
    );
    const shell = this.#shell;
    this.#shell = null;
    this.#exited = true;
    shell?.close();
    await stopGlassAgentProcesses(device, [manifest.mainClass], 5000);
  }

  async #ensureJar(): Promise<boolean> {
    return ensureAgentJar(this.#o.device, this.#o.manifest, this.#o.jarPath);
  }

  /** Start the agent; a stale one holding the socket is killed and the start tried once more. */
  async #launch(): Promise<boolean> {
    const first = await this.#startProcess();
    if (first === 'started') return false;
    if (!ADDRESS_IN_USE.test(first)) throw this.#launchFailed(first);
    const { device, manifest } = this.#o;
    this.#o.logger?.warn(
      { serial: device.serial },
      'glass agent: a stale agent holds the socket; killing it',
    );
    await stopGlassAgentProcesses(device, [manifest.mainClass]);
    const second = await this.#startProcess();
    if (second !== 'started') throw this.#launchFailed(second);
    return true;
  }

  #launchFailed(stderr: string): BridgeError {
    return new BridgeError(
      'HELPER_FAILED',
      `the glass agent did not start on ${this.#o.device.serial}: ${stderr.trim().slice(0, 300) || 'it exited'}`,
      { details: { serial: this.#o.device.serial, startFailure: 'exited' satisfies StartFailure } },
    );
  }

  /**
   * `CLASSPATH=… app_process / Main` on a held stream: 'started' once it printed its first line (or
   * is still running after STARTUP_QUIET_MS without a word), else what it wrote to stderr when it
   * exited.
   */
  async #startProcess(): Promise<'started' | string> {
    const { device, manifest } = this.#o;
    const command = `CLASSPATH=${quoteShellArg(manifest.devicePath)} ${shellCommand('app_process', '/', manifest.mainClass)}`;
    const shell = await device.shellStream(command, { timeoutMs: 10_000 });
    this.#launched = true;
    if (this.#closed) {
      shell.close();
      this.#refuseClosed();
    }
    let stderr = '';
    const onStderr = (d: Buffer) => {
      // Kept for the start-up verdict only, and bounded: a chatty agent must not grow memory.
      if (stderr.length < 4096) stderr += d.toString('utf8');
    };
    shell.stderr.on('data', onStderr);
    const exited = shell.exit.then(() => 'exited' as const);
    const printed = new Promise<'printed'>((resolve) => shell.stdout.once('data', () => resolve('printed')));
    let timer: NodeJS.Timeout | undefined;
    const quiet = new Promise<'quiet'>((resolve) => {
      timer = setTimeout(() => resolve('quiet'), STARTUP_QUIET_MS);
    });
    const outcome = await Promise.race([exited, printed, quiet]);
    clearTimeout(timer);
    if (outcome === 'exited') return stderr || 'exited';
    if (this.#closed) {
      shell.close();
      this.#refuseClosed();
    }
    shell.stderr.off('data', onStderr);
    shell.stderr.resume();
    shell.stdout.resume();
    this.#shell = shell;
    this.#exited = false;
    void shell.exit.then(() => {
      if (this.#shell === shell) this.#exited = true;
    });
    return 'started';
  }

  /** Connect and ping, for up to `readyTimeoutMs` (less when `deadlineAt` comes first). */
  async #connect(deadlineAt = Number.POSITIVE_INFINITY, signal?: AbortSignal): Promise<void> {
    const totalMs = Math.max(0, Math.min(this.#o.readyTimeoutMs ?? 5000, deadlineAt - performance.now()));
    const client = await this.#endpoint
      .connect((c) => c.request('ping', {}, { timeoutMs: Math.min(5000, Math.max(1, totalMs)) }), {
        intervalMs: this.#o.intervalMs ?? 200,
        totalMs,
        ...(signal === undefined ? {} : { signal }),
      })
      .catch((err: unknown) => {
        if (!this.#closed) throw err;
        return null;
      });
    if (this.#closed) {
      // close() ran while connecting: the forward it removed may have been opened again since.
      client?.close();
      await this.#endpoint.close();
      this.#refuseClosed();
    }
    this.#client = client;
  }

  #refuseClosed(): void {
    if (this.#closed) throw new BridgeError('UNAVAILABLE', 'the glass agent was closed');
  }
}
