/**
 * Simulated devices on loopback TCP: one listening port and one emulated Android per device. The
 * real adb server reaches them with `adb connect 127.0.0.1:PORT`; the device's state (files,
 * packages, settings) survives reconnections of the host.
 *
 * Going offline (`offlineAfterMs`): that long after the host's CNXN was answered, the device drops
 * every connection and from then on accepts TCP connections but never answers them, so adb shows it
 * `offline` (a real device that stopped responding) until `setFaults` lifts the fault.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { AdbdConnection } from './adbd/connection.ts';
import { mergeFaults } from './faults.ts';
import { runningHelperCount, stopAllHelpers } from './helper/instrumentation-run.ts';
import type { FaultEffects, Faults, SimAndroid, SimAndroidOptions } from './types.ts';

export interface SimulatorOptions {
  /** First port; devices use port … port+count-1. 0 (default) = a random free port per device. */
  port?: number;
  count?: number;
  host?: '127.0.0.1';
  /** uiautomator XML every device shows (default: the built-in screen). */
  ui?: string;
  /** Generate a UI tree with this many nodes instead. */
  nodes?: number;
  faults?: Faults;
  /** Every device answers CNXN with AUTH and never accepts: adb shows `unauthorized`. */
  requireAuth?: boolean;
  seed?: number;
  /** adbd features advertised in the CNXN banner (default `DEVICE_FEATURES`); drop `abb_exec`/`cmd` to
   * make adb take its older install paths. */
  features?: readonly string[];
  /** Synthetic log lines per second per device (`simulate --log-rate N`), for logcat load tests. */
  logRate?: number;
  /** Third-party apps every device has from the start (a farm's own apps). */
  preinstalled?: SimAndroidOptions['preinstalled'];
  /** Builds each device's Android; default `createSimAndroid` from ./android/index.ts. */
  createAndroid?: (options: SimAndroidOptions) => SimAndroid;
}

export interface SimulatedDevice {
  /** `127.0.0.1:PORT`, what `adb connect` takes. */
  readonly address: string;
  /** The serial adb shows for the device (the address). */
  readonly serial: string;
  readonly port: number;
  readonly android: SimAndroid;
  /** The active faults (live; the Android layer sees the same object). */
  readonly faults: Faults;
  /** True after `offlineAfterMs` elapsed: connections are accepted but never answered. */
  readonly offline: boolean;
  /** Connections currently answered (handshake done or in progress). */
  readonly connectionCount: number;
  /** True unless the cable is pulled (`unplug`). */
  readonly plugged: boolean;
  /** What the latency and bandwidth faults did to the device's output so far (counts). */
  readonly faultEffects: FaultEffects;
  /**
   * Replace the faults; they apply to open connections at once. Lifting `offlineAfterMs` brings it
   * back; setting `unauthorized` drops the connections (the key was revoked), lifting it accepts the
   * host's key on connections waiting for it; setting `helperCrash` kills running helpers, and
   * `helperTimeout` makes a running session stop answering.
   */
  setFaults(faults: Faults): void;
  /** Add or change some faults, keeping the others. */
  setFault(faults: Faults): void;
  /** Lift one fault (by its `Faults` key), or all of them. */
  clearFault(key?: keyof Faults): void;
  /** Drop every open connection of this device (a glitch: the host may reconnect at once). */
  disconnectAll(): void;
  /** Pull the cable: drop every connection and refuse new ones until `plug()`. */
  unplug(): void;
  plug(): void;
  /** Addresses listened on inside the device (forward targets: `tcp:PORT`, `localabstract:NAME`). */
  listeners(): string[];
  /** Helper instrumentations running on the device. */
  runningHelpers(): number;
  /** Long-running processes started from a shell on the device (the glass agent), as `pid cmdline`. */
  processes(): Array<{ pid: number; cmdline: string }>;
  /**
   * Accept the host's key from now on (`--require-auth` devices): the next handshake is answered
   * with CNXN. A connection already waiting in AUTH stays unauthorized (its prompt is gone), so the
   * host has to connect again, as with a real device whose key was added to adb_keys.
   */
  acceptKey(): void;
}

export interface Simulator {
  readonly devices: SimulatedDevice[];
  close(): Promise<void>;
}

class Device implements SimulatedDevice {
  readonly address: string;
  readonly serial: string;
  readonly port: number;
  readonly android: SimAndroid;
  readonly faults: Faults;
  readonly faultEffects: FaultEffects = { delayedMessages: 0, pacedBytes: 0 };
  #server: Server;
  #requireAuth: boolean;
  #features: readonly string[] | undefined;
  #connections = new Set<AdbdConnection>();
  #held = new Set<Socket>();
  #offline = false;
  #plugged = true;
  #offlineTimers = new Set<NodeJS.Timeout>();

  constructor(
    server: Server,
    port: number,
    android: SimAndroid,
    faults: Faults,
    requireAuth: boolean,
    features: readonly string[] | undefined,
  ) {
    this.#server = server;
    this.port = port;
    this.address = `127.0.0.1:${port}`;
    this.serial = this.address;
    this.android = android;
    this.faults = faults;
    this.#requireAuth = requireAuth;
    this.#features = features;
    server.on('connection', (socket) => this.#accept(socket));
  }

  get offline(): boolean {
    return this.#offline;
  }

  get connectionCount(): number {
    return this.#connections.size;
  }

  get plugged(): boolean {
    return this.#plugged;
  }

  setFault(faults: Faults): void {
    this.setFaults(mergeFaults(this.faults, faults));
  }

  clearFault(key?: keyof Faults): void {
    if (key === undefined) {
      this.setFaults({});
      return;
    }
    const next = mergeFaults(this.faults);
    delete next[key];
    this.setFaults(next);
  }

  unplug(): void {
    this.#plugged = false;
    this.disconnectAll();
  }

  plug(): void {
    this.#plugged = true;
  }

  listeners(): string[] {
    return this.android.listening();
  }

  runningHelpers(): number {
    return runningHelperCount(this.android.device);
  }

  processes(): Array<{ pid: number; cmdline: string }> {
    return this.android.processes?.() ?? [];
  }

  setFaults(faults: Faults): void {
    const before = { ...this.faults };
    for (const key of Object.keys(this.faults)) delete (this.faults as Record<string, unknown>)[key];
    Object.assign(this.faults, mergeFaults(faults));
    if (this.faults.unauthorized === true && before.unauthorized !== true) {
      // The host's key was revoked: adbd drops the connection; the host reconnects into AUTH.
      for (const connection of this.#connections) connection.close();
    } else if (this.faults.unauthorized !== true && before.unauthorized === true) {
      // The user tapped "Allow": waiting connections go online.
      for (const connection of this.#connections) connection.authorize();
    }
    if (this.faults.helperCrash === true && before.helperCrash !== true) {
      // The helper crashes: running instrumentations die now (and new ones crash as they start).
      stopAllHelpers(this.android.device);
    }
    if (
      this.faults.glassA11yUnbind !== before.glassA11yUnbind ||
      this.faults.a11yPolicyBlocked !== before.a11yPolicyBlocked
    )
      this.android.faultsChanged?.();
    if (this.faults.offlineAfterMs !== undefined && before.offlineAfterMs === undefined && !this.#offline) {
      // Set at run time on a connected device: counted from now.
      if ([...this.#connections].some((c) => c.state === 'online')) this.#armOffline();
    }
    if (this.faults.offlineAfterMs === undefined) {
      for (const timer of this.#offlineTimers) clearTimeout(timer);
      this.#offlineTimers.clear();
      if (this.#offline) {
        this.#offline = false;
        // Held connections never got an answer; drop them so the host reconnects.
        for (const socket of this.#held) socket.destroy();
        this.#held.clear();
      }
    }
  }

  acceptKey(): void {
    this.#requireAuth = false;
  }

  disconnectAll(): void {
    for (const connection of this.#connections) connection.close();
    this.#connections.clear();
    for (const socket of this.#held) socket.destroy();
    this.#held.clear();
  }

  async close(): Promise<void> {
    for (const timer of this.#offlineTimers) clearTimeout(timer);
    this.#offlineTimers.clear();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.disconnectAll();
    await closed;
    this.android.shutdown();
  }

  #accept(socket: Socket): void {
    if (!this.#plugged) {
      // No cable: nothing answers; the connection is reset at once.
      socket.on('error', () => undefined);
      socket.resetAndDestroy();
      return;
    }
    if (this.#offline) {
      // Offline: the TCP connection is accepted but the device never answers.
      this.#held.add(socket);
      socket.on('data', () => {});
      socket.on('error', () => socket.destroy());
      socket.on('close', () => this.#held.delete(socket));
      return;
    }
    const connection = new AdbdConnection(socket, {
      android: this.android,
      faults: () => this.faults,
      requireAuth: this.#requireAuth,
      ...(this.#features === undefined ? {} : { features: this.#features }),
      onOnline: () => this.#armOffline(),
      effects: this.faultEffects,
    });
    this.#connections.add(connection);
    connection.onClose(() => this.#connections.delete(connection));
  }

  #armOffline(): void {
    const after = this.faults.offlineAfterMs;
    if (after === undefined) return;
    const timer = setTimeout(() => {
      this.#offlineTimers.delete(timer);
      if (this.faults.offlineAfterMs === undefined) return;
      this.#offline = true;
      for (const connection of this.#connections) connection.close();
    }, after);
    timer.unref();
    this.#offlineTimers.add(timer);
  }
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen({ port, host, exclusive: true }, () => {
      server.off('error', onError);
      const address = server.address();
      if (address === null || typeof address === 'string') reject(new Error('no TCP address'));
      else resolve(address.port);
    });
  });
}

/** Start `count` simulated devices on 127.0.0.1. Rejects (and closes what it opened) when a port is taken. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const count = options.count ?? 1;
  const basePort = options.port ?? 0;
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1') throw new Error('the simulator listens on 127.0.0.1 only');
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`count must be a positive integer, got ${count}`);
  if (!Number.isInteger(basePort) || basePort < 0 || basePort + count - 1 > 65535) {
    throw new Error(`port must be 0 or leave room for ${count} device(s) below 65536, got ${basePort}`);
  }
  const createAndroid = options.createAndroid ?? (await import('./android/index.ts')).createSimAndroid;

  const devices: Device[] = [];
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer({ noDelay: true });
      servers.push(server);
      const port = await listen(server, basePort === 0 ? 0 : basePort + i, host);
      const serial = `127.0.0.1:${port}`;
      const faults: Faults = mergeFaults(options.faults);
      const androidOptions: SimAndroidOptions = { serial, faults, seed: (options.seed ?? 1) + i };
      if (options.ui !== undefined) androidOptions.uiXml = options.ui;
      if (options.nodes !== undefined) androidOptions.nodes = options.nodes;
      if (options.logRate !== undefined) androidOptions.logRate = options.logRate;
      if (options.preinstalled !== undefined) androidOptions.preinstalled = options.preinstalled;
      const android = createAndroid(androidOptions);
      devices.push(new Device(server, port, android, faults, options.requireAuth === true, options.features));
    }
  } catch (err) {
    await Promise.all(devices.map((device) => device.close()));
    for (const server of servers.slice(devices.length)) server.close();
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    devices,
    close: () => {
      closing ??= Promise.all(devices.map((device) => device.close())).then(() => undefined);
      return closing;
    },
  };
}
