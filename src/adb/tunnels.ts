/**
 * Remote ADB tunnels (`adb connect host:port`): registered endpoints are connected, watched with
 * adb's device tracker, and re-connected with capped exponential backoff while offline or absent.
 * After the adb server restarts, every tunnel is re-connected. Emits `state` {endpoint, state}.
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
  readonly #tunnels = new Map<string, TunnelStatus & { timer?: NodeJS.Timeout }>();
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
    this.#set(t, state);
    if (state === 'device') {
      t.attempts = 0;
      if (t.timer) clearTimeout(t.timer);
      t.timer = undefined;
    } else if (state === 'offline' || state === 'absent') {
      this.#schedule(t);
    }
  }

  #set(t: TunnelStatus, state: DeviceState): void {
    if (t.state === state) return;
    t.state = state;
    this.emit('state', { endpoint: t.endpoint, state });
  }

  #schedule(t: TunnelStatus & { timer?: NodeJS.Timeout }): void {
    if (this.#stopped || t.timer || !this.#tunnels.has(t.endpoint)) return;
    const delay = Math.min(this.#max, this.#initial * 2 ** Math.min(t.attempts, 16));
    t.timer = setTimeout(() => {
      t.timer = undefined;
      void this.#connect(t);
    }, delay);
    t.timer.unref?.();
  }

  async #connect(t: TunnelStatus & { timer?: NodeJS.Timeout }): Promise<void> {
    if (this.#stopped || !this.#tunnels.has(t.endpoint)) return;
    t.attempts += 1;
    try {
      // adb keeps retrying an offline transport on its own schedule (and its backoff grows); after
      // two of our attempts found it still offline, drop it so `connect` opens a fresh transport.
      if (t.state === 'offline' && t.attempts > 2) {
        await this.#client.disconnect(t.endpoint, { timeoutMs: 5000 }).catch(() => undefined);
      }
      await this.#client.connect(t.endpoint, { timeoutMs: 10_000 });
      const found = (await this.#client.devices()).find((d) => d.serial === t.endpoint);
      this.#set(t, found?.state ?? 'absent');
      if (found?.state === 'device') {
        t.attempts = 0;
        delete t.lastError;
        return;
      }
    } catch (err) {
      t.lastError = (err as Error).message;
      this.#set(t, 'offline');
    }
    this.#schedule(t);
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
    return this.status(endpoint)!;
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
    for (const t of this.#tunnels.values()) void this.#connect(t);
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
