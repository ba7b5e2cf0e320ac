/**
 * The bridge's own adb server: `adb -P <port> server nodaemon` on a private port (never the user's
 * 5037), restarted with capped exponential backoff when it dies or is killed from outside. Nothing
 * else in the bridge starts adb (AdbClient only connects; it never starts a server).
 *
 * "Ready" means *our* server answers: the child we spawned (still alive), or a server we adopted and
 * watch — never merely "something answers on the port". A server found on the private port is
 * adopted (and stopped with the bridge) only with proof that a bridge started it: the pid file
 * `<stateDir>/adb-server-<port>.pid` written at spawn names a live process running
 * `adb -P <port> server` (a SIGKILLed bridge's leftover). Any other server there is someone else's:
 * start fails naming the port and DEVICEBRIDGE_ADB_PORT, and it is never killed. Emits `exit` when our server is gone and `restarted` after every server
 * change (restart, adoption of a server found on the port, replacement of an adopted one) so every
 * tunnel is re-connected. With `external: true` (ADB_SERVER) it only waits for that server to answer.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BridgeError } from '../errors.ts';
import { responsiveTimeout } from '../event-loop-turns.ts';
import type { Logger } from '../observability/logger.ts';
import { parseVersion } from '../protocol/adb/host-protocol.ts';
import { type AdbServerConnector, TcpAdbServerConnector } from './connector.ts';
import { HostConnection } from './host-connection.ts';

export interface AdbServerOptions {
  host?: string;
  port: number;
  adbPath?: string;
  external?: boolean;
  logger?: Logger;
  /** First restart delay; doubles up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /**
   * Where the pid file of the server this bridge starts lives (the data dir): the proof that lets a
   * later bridge adopt a leftover server. Without it a server found on the port is never adopted.
   */
  stateDir?: string;
}

/** The pid file of the bridge's adb server on `port` under `stateDir`. */
export function adbServerPidFile(stateDir: string, port: number): string {
  return path.join(stateDir, `adb-server-${port}.pid`);
}

/**
 * Is `pid` a live `adb -P <port> server` process? Reads /proc (Linux); where there is no /proc, a
 * live pid is the best proof there is.
 */
export function isBridgeAdbServer(pid: number, port: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch {
    // EPERM: alive, but another user's process — not ours.
    return false;
  }
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return true;
  }
  const at = argv.indexOf('-P');
  return at !== -1 && argv[at + 1] === String(port) && argv.includes('server');
}

/** The refusal to touch a server this bridge cannot prove it started. */
export function foreignAdbServerError(host: string, port: number): BridgeError {
  return new BridgeError(
    'INVALID_ARGUMENT',
    `an adb server this bridge did not start is listening on ${host}:${port}; set DEVICEBRIDGE_ADB_PORT to a free port ` +
      '(the bridge never adopts or stops an adb server it cannot prove it started; ADB_SERVER=host:port uses one deliberately)',
    { details: { port, setting: 'DEVICEBRIDGE_ADB_PORT' } },
  );
}

/**
 * Ask an adb server for its version (`host:version`); resolves the version number or rejects.
 * `responsive`: the budget counts only the time this process's event loop was responsive (the
 * readiness check: a node busy with device output must not read its adb server as down).
 */
export async function pingAdbServer(
  connector: AdbServerConnector,
  timeoutMs = 1000,
  options: { responsive?: boolean } = {},
): Promise<number> {
  // One budget for the whole exchange (connect, status, version), not one per step.
  const responsive = options.responsive ? responsiveTimeout(timeoutMs) : undefined;
  const deadline =
    responsive === undefined
      ? { timeoutMs, signal: AbortSignal.timeout(timeoutMs) }
      : { timeoutMs: 0, signal: responsive.signal };
  try {
    const conn = await HostConnection.open(connector, deadline);
    try {
      conn.send('host:version');
      await conn.okay(deadline, 'host:version');
      return parseVersion(await conn.string(deadline, 'host:version'));
    } finally {
      conn.destroy();
    }
  } finally {
    responsive?.dispose();
  }
}

/** Ask an adb server to exit (`host:kill`); resolves once it closed the connection. */
export async function killAdbServer(connector: AdbServerConnector, timeoutMs = 2000): Promise<void> {
  const deadline = { timeoutMs, signal: AbortSignal.timeout(timeoutMs) };
  const conn = await HostConnection.open(connector, deadline);
  try {
    conn.send('host:kill');
    await conn.rest(deadline, 'host:kill').catch(() => undefined);
  } finally {
    conn.destroy();
  }
}

export class AdbServer extends EventEmitter {
  readonly host: string;
  readonly port: number;
  /** How clients reach this server. */
  readonly connector: TcpAdbServerConnector;
  readonly #adbPath: string;
  readonly #external: boolean;
  readonly #logger: Logger | undefined;
  readonly #backoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #pidFile: string | undefined;
  #child: ChildProcess | undefined;
  /** A server we found on the private port and watch (no child of ours). */
  #adopted = false;
  #stopped = false;
  #restarts = 0;
  #failures = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  /** The adb binary could not be started at all (e.g. not installed): no point retrying. */
  #spawnError: Error | undefined;

  constructor(options: AdbServerOptions) {
    super();
    if (!options.external && options.port === 5037) {
      throw new BridgeError(
        'INVALID_ARGUMENT',
        "the bridge never runs its adb server on 5037 (the user's default)",
      );
    }
    this.host = options.host ?? '127.0.0.1';
    this.port = options.port;
    this.connector = new TcpAdbServerConnector({ host: this.host, port: this.port });
    this.#adbPath = options.adbPath ?? 'adb';
    this.#external = options.external ?? false;
    this.#logger = options.logger;
    this.#backoffMs = options.backoffMs ?? 250;
    this.#maxBackoffMs = options.maxBackoffMs ?? 8000;
    this.#pidFile =
      options.stateDir === undefined ? undefined : adbServerPidFile(options.stateDir, this.port);
  }

  /** Does the pid file prove that the server on our port was started by a bridge (and still runs)? */
  #provenOurs(): boolean {
    if (this.#pidFile === undefined) return false;
    let pid: number;
    try {
      pid = Number(readFileSync(this.#pidFile, 'utf8').trim());
    } catch {
      return false;
    }
    return isBridgeAdbServer(pid, this.port);
  }

  #writePidFile(pid: number | undefined): void {
    if (this.#pidFile === undefined || pid === undefined) return;
    try {
      mkdirSync(path.dirname(this.#pidFile), { recursive: true });
      writeFileSync(this.#pidFile, `${pid}\n`);
    } catch (err) {
      this.#logger?.warn({ err: (err as Error).message }, 'cannot write the adb server pid file');
    }
  }

  #removePidFile(): void {
    if (this.#pidFile !== undefined) rmSync(this.#pidFile, { force: true });
  }

  /** True when the server is someone else's (ADB_SERVER, or one already running): never spawned, never killed. */
  get external(): boolean {
    return this.#external;
  }

  get restarts(): number {
    return this.#restarts;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  async start(timeoutMs = 15_000): Promise<void> {
    this.#stopped = false;
    if (!this.#external) {
      // A server already answering on our private port is a leftover of an earlier bridge (killed
      // before it could stop its child): adopt it, and watch it since we get no exit event.
      const running = await pingAdbServer(this.connector, 300).then(
        () => true,
        () => false,
      );
      if (running) {
        if (!this.#provenOurs()) throw foreignAdbServerError(this.host, this.port);
        this.#logger?.info(
          { port: this.port },
          'adopting the adb server a bridge left running on the private port (its pid file proves it)',
        );
        this.#adopt();
      } else {
        this.#spawn();
      }
    }
    await this.waitUntilReady(timeoutMs);
  }

  /** Is the server on the port ours: our live child, or the one we adopted? */
  #ours(): boolean {
    if (this.#external || this.#adopted) return true;
    const child = this.#child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  #adopt(): void {
    this.#adopted = true;
    let misses = 0;
    if (this.#watchdog) clearInterval(this.#watchdog);
    this.#watchdog = setInterval(() => {
      void pingAdbServer(this.connector, 1000).then(
        () => {
          misses = 0;
        },
        () => {
          // Two missed pings in a row (not one slow answer) mean it is gone.
          misses += 1;
          if (this.#stopped || this.#child || misses < 2) return;
          clearInterval(this.#watchdog);
          this.#watchdog = undefined;
          this.#adopted = false;
          this.#logger?.warn({ port: this.port }, 'adopted adb server is gone; starting our own');
          this.emit('exit', { code: null, signal: null });
          void this.#restart();
        },
      );
    }, 1000);
    this.#watchdog.unref();
  }

  async waitUntilReady(timeoutMs = 15_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < until) {
      if (this.#spawnError) {
        throw new BridgeError(
          'UNAVAILABLE',
          `cannot start ${this.#adbPath}: ${this.#spawnError.message} (install Debian's adb or set DEVICEBRIDGE_ADB_PATH)`,
        );
      }
      if (!this.#ours()) {
        // Our child exited before answering (e.g. the port was taken): whatever answers is not ours.
        throw new BridgeError(
          'UNAVAILABLE',
          `the adb server on ${this.host}:${this.port} exited before it answered`,
        );
      }
      try {
        await pingAdbServer(this.connector);
        return;
      } catch (err) {
        last = err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new BridgeError(
      'UNAVAILABLE',
      `adb server on ${this.host}:${this.port} did not answer within ${timeoutMs} ms`,
      {
        details: { reason: last instanceof Error ? last.message : String(last) },
      },
    );
  }

  #spawn(): void {
    const child = spawn(this.#adbPath, ['-P', String(this.port), 'server', 'nodaemon'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ANDROID_ADB_SERVER_PORT: String(this.port) },
    });
    this.#child = child;
    this.#writePidFile(child.pid);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2000);
    });
    child.on('error', (err) => {
      this.#logger?.error({ err: err.message }, 'adb server failed to start');
      if (
        (err as NodeJS.ErrnoException).code === 'ENOENT' ||
        (err as NodeJS.ErrnoException).code === 'EACCES'
      ) {
        this.#spawnError = err;
        this.#stopped = true;
      }
    });
    child.on('exit', (code, signal) => {
      if (this.#child === child) {
        this.#child = undefined;
        this.#removePidFile();
      }
      if (this.#stopped) return;
      this.#failures += 1;
      const delay = Math.min(this.#maxBackoffMs, this.#backoffMs * 2 ** Math.min(this.#failures - 1, 10));
      this.#logger?.warn(
        { code, signal, delayMs: delay, stderr: stderr.slice(-300) },
        'adb server exited; restarting',
      );
      this.emit('exit', { code, signal });
      this.#restartTimer = setTimeout(() => void this.#restart(), delay);
    });
  }

  async #restart(): Promise<void> {
    if (this.#stopped || this.#child || this.#adopted) return;
    // A server answering on the private port now was not started by us (nothing in the bridge
    // auto-starts adb; a CLI run by hand might): adopt and watch it rather than fight over the port.
    const taken = await pingAdbServer(this.connector, 500).then(
      () => true,
      () => false,
    );
    if (this.#stopped) return;
    if (taken && !this.#provenOurs()) {
      // Someone else's server took the port: never adopt or kill it; try again later.
      this.#failures += 1;
      const delay = Math.min(this.#maxBackoffMs, this.#backoffMs * 2 ** Math.min(this.#failures - 1, 10));
      this.#logger?.error(
        { port: this.port, delayMs: delay, err: foreignAdbServerError(this.host, this.port).message },
        'the private adb port is taken by a server this bridge did not start',
      );
      this.#restartTimer = setTimeout(() => void this.#restart(), delay);
      return;
    }
    if (taken) {
      this.#logger?.warn({ port: this.port }, 'adopting the adb server a bridge left on the private port');
      this.#adopt();
    } else {
      this.#spawn();
      const child = this.#child as ChildProcess | undefined;
      try {
        await this.waitUntilReady(10_000);
      } catch (err) {
        this.#logger?.error({ err: (err as Error).message }, 'adb server restart did not answer');
        // Its exit (now or after the kill) schedules the next attempt, with a longer backoff.
        child?.kill('SIGKILL');
        return;
      }
    }
    if (this.#stopped) return;
    this.#failures = 0;
    this.#restarts += 1;
    this.emit('restarted', { restarts: this.#restarts, adopted: this.#adopted });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#restartTimer) clearTimeout(this.#restartTimer);
    if (this.#watchdog) {
      clearInterval(this.#watchdog);
      this.#watchdog = undefined;
    }
    if (this.#adopted) {
      // An adopted server was proven ours (its pid file): ours to end too.
      this.#adopted = false;
      await killAdbServer(this.connector).catch(() => undefined);
      this.#removePidFile();
    }
    const child = this.#child;
    this.#child = undefined;
    if (child && child.exitCode === null) {
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => child.kill('SIGKILL'), 3000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill('SIGTERM');
      });
    }
    if (child) this.#removePidFile();
  }
}
