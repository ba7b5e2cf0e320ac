/**
 * Remote ADB tunnels (`adb connect host:port`): registered endpoints are connected, watched with
 * adb's device tracker, and re-connected with capped exponential backoff while offline, absent or
 * unauthorized (an unauthorized tunnel is disconnected first, so the retry is a fresh handshake that
 * sees a key accepted meanwhile). After every adb server change (`restarted`) every tunnel is
 * re-connected; `reconnect` lets the health loop re-connect a tunnel adb no longer lists.
 * Emits `state` {endpoint, state}.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from '../observability/logger.ts';
import type { AdbClient, DeviceState } from './client.ts';
import type { AdbServer } from './server.ts';

export interface TunnelStatus {
  endpoint: string;
  state: DeviceState;
  attempts: number;
  lastError?: string;
}

type Tunnel = TunnelStatus & {
  timer?: NodeJS.Timeout;
  /** An attempt is running. */
  connecting?: boolean;
  /** Run another attempt right after the running one (the server changed meanwhile). */
  again?: boolean;
  /** Re-handshaking an unauthorized transport: the absent/offline moments in between are ours. */
  rehandshake?: boolean;
};

export interface TunnelOptions {
  client: AdbClient;
  server?: AdbServer;
  logger?: Logger;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

export class TunnelManager extends EventEmitter {
  readonly #client: AdbClient;
  readonly #server: AdbServer | undefined;
  readonly #logger: Logger | undefined;
  readonly #initial: number;
  readonly #max: number;
  readonly #tunnels = new Map<string, Tunnel>();
  #tracker: { stop(): void } | undefined;
  #stopped = false;
  readonly #onRestart = () => void this.#afterServerRestart();
  readonly #onExit = () => this.#onServerExit();

  constructor(options: TunnelOptions) {
    super();
    this.#client = options.client;
    this.#server = options.server;
    this.#logger = options.logger;
    this.#initial = options.initialBackoffMs ?? 500;
    this.#max = options.maxBackoffMs ?? 30_000;
  }

  async start(): Promise<void> {
    this.#stopped = false;
    this.#server?.on('restarted', this.#onRestart);
    this.#server?.on('exit', this.#onExit);
    await this.#track();
  }

  async #track(): Promise<void> {
    this.#tracker?.stop();
    try {
      const tracker = await this.#client.trackDevices();
      this.#tracker = tracker;
      tracker.events.on('change', ({ serial, state }: { serial: string; state: string }) =>
        this.#observe(serial, state),
      );
      tracker.events.on('error', () => undefined);
      tracker.events.on('end', () => {
        // The server went away; a restart will re-track.
        if (this.#tracker === tracker) this.#tracker = undefined;
      });
    } catch (err) {
      this.#logger?.warn({ err: (err as Error).message }, 'device tracker unavailable');
    }
  }

  #observe(serial: string, state: string): void {
    const t = this.#tunnels.get(serial);
    if (!t) return;
    // Our own disconnect + connect of an unauthorized tunnel: it stays unauthorized until it is not.
    if (t.rehandshake && state !== 'device' && state !== 'unauthorized') return;
    this.#set(t, state);
    if (state === 'device') {
      t.attempts = 0;
      if (t.timer) clearTimeout(t.timer);
      t.timer = undefined;
    } else if (state === 'offline' || state === 'absent' || state === 'unauthorized') {
      this.#schedule(t);
    }
  }

  #set(t: TunnelStatus, state: DeviceState): void {
    if (t.state === state) return;
    t.state = state;
    this.emit('state', { endpoint: t.endpoint, state });
  }

  #schedule(t: Tunnel): void {
    if (this.#stopped || t.timer || t.connecting || !this.#tunnels.has(t.endpoint)) return;
    const delay = Math.min(this.#max, this.#initial * 2 ** Math.min(t.attempts, 16));
    t.timer = setTimeout(() => {
      t.timer = undefined;
      void this.#connect(t);
    }, delay);
    t.timer.unref?.();
  }

  async #connect(t: Tunnel): Promise<void> {
    if (this.#stopped || t.connecting || this.#tunnels.get(t.endpoint) !== t) return;
    t.connecting = true;
    try {
      await this.#connectOnce(t);
    } finally {
      t.connecting = false;
    }
    if (t.again) {
      t.again = false;
      void this.#connect(t);
    } else if (t.state !== 'device') {
      this.#schedule(t);
    }
  }

  async #connectOnce(t: Tunnel): Promise<void> {
    t.attempts += 1;
    try {
      // adb keeps retrying an offline transport on its own schedule (and its backoff grows); after
      // two of our attempts found it still offline, drop it so `connect` opens a fresh transport.
      // An unauthorized transport never re-handshakes by itself: drop it every time, so the next
      // `connect` presents the key again (accepted by now, or not).
      if (t.state === 'unauthorized') t.rehandshake = true;
      if ((t.state === 'offline' && t.attempts > 2) || t.rehandshake) {
        await this.#client.disconnect(t.endpoint, { timeoutMs: 5000 }).catch(() => undefined);
      }
      await this.#client.connect(t.endpoint, { timeoutMs: 10_000 });
      const found = (await this.#client.devices({ timeoutMs: 10_000 })).find((d) => d.serial === t.endpoint);
      const state = found?.state ?? 'absent';
      // Re-handshaking an unauthorized device: it stays unauthorized until it is `device` (or the
      // endpoint stops answering: connect throws below).
      const handshaking = t.rehandshake === true && state !== 'device';
      if (!handshaking) t.rehandshake = false;
      this.#set(t, handshaking ? 'unauthorized' : state);
      if (state === 'device') {
        t.attempts = 0;
        delete t.lastError;
      }
    } catch (err) {
      t.lastError = (err as Error).message;
      // `adb connect` answers "failed to authenticate" for a device that has not accepted the key.
      const unauthorized = (err as { code?: string }).code === 'UNAUTHORIZED_DEVICE';
      t.rehandshake = unauthorized;
      this.#set(t, unauthorized ? 'unauthorized' : 'offline');
    }
  }

  /**
   * Re-connect a registered tunnel now (unless an attempt is already pending or running), e.g. when
   * the health loop finds that adb no longer lists it. A lost device tracker is re-opened too.
   * Resolves false for an endpoint that is not registered.
   */
  reconnect(endpoint: string): boolean {
    const t = this.#tunnels.get(endpoint);
    if (!t || this.#stopped) return false;
    if (!this.#tracker) void this.#track();
    if (t.timer || t.connecting) return true;
    void this.#connect(t);
    return true;
  }

  /** Register and connect an endpoint; it stays registered (and retried) even when unreachable. */
  async add(endpoint: string): Promise<TunnelStatus> {
    let t = this.#tunnels.get(endpoint);
    if (!t) {
      t = { endpoint, state: 'connecting', attempts: 0 };
      this.#tunnels.set(endpoint, t);
    }
    if (t.timer) clearTimeout(t.timer);
    t.timer = undefined;
    await this.#connect(t);
    return this.status(endpoint) ?? { endpoint, state: 'absent', attempts: 0 };
  }

  async remove(endpoint: string): Promise<void> {
    const t = this.#tunnels.get(endpoint);
    if (!t) return;
    if (t.timer) clearTimeout(t.timer);
    this.#tunnels.delete(endpoint);
    await this.#client.disconnect(endpoint).catch(() => undefined);
  }

  status(endpoint: string): TunnelStatus | undefined {
    const t = this.#tunnels.get(endpoint);
    if (!t) return undefined;
    return {
      endpoint: t.endpoint,
      state: t.state,
      attempts: t.attempts,
      ...(t.lastError ? { lastError: t.lastError } : {}),
    };
  }

  list(): TunnelStatus[] {
    return [...this.#tunnels.keys()].map((e) => this.status(e)!);
  }

  /** Wait until an endpoint is `device` (or the timeout passes). */
  async waitFor(endpoint: string, state: DeviceState = 'device', timeoutMs = 10_000): Promise<boolean> {
    if (this.status(endpoint)?.state === state) return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.off('state', onState);
        resolve(false);
      }, timeoutMs);
      const onState = (e: { endpoint: string; state: string }) => {
        if (e.endpoint === endpoint && e.state === state) {
          clearTimeout(timer);
          this.off('state', onState);
          resolve(true);
        }
      };
      this.on('state', onState);
    });
  }

  /** The adb server died: every tunnel is offline until it is re-connected. */
  #onServerExit(): void {
    for (const t of this.#tunnels.values()) this.#set(t, 'offline');
  }

  async #afterServerRestart(): Promise<void> {
    this.#logger?.info({ tunnels: this.#tunnels.size }, 'adb server restarted: re-connecting tunnels');
    for (const t of this.#tunnels.values()) {
      if (t.timer) clearTimeout(t.timer);
      t.timer = undefined;
      t.attempts = 0;
      this.#set(t, 'connecting');
    }
    await this.#track();
    for (const t of this.#tunnels.values()) {
      // An attempt still running was made against the old server: run another one after it.
      if (t.connecting) t.again = true;
      else void this.#connect(t);
    }
  }

  stop(): void {
    this.#stopped = true;
    this.#server?.off('restarted', this.#onRestart);
    this.#server?.off('exit', this.#onExit);
    this.#tracker?.stop();
    this.#tracker = undefined;
    for (const t of this.#tunnels.values()) if (t.timer) clearTimeout(t.timer);
  }
}
