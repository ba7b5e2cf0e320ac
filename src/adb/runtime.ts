/**
 * The ADB side of one bridge node: an adb server (the bridge's own on a private port, or an external
 * `ADB_SERVER`), the client, tunnels, the forward ledger and per-device locks. Built once at start.
 *
 * The forward ledger is reconciled with the server at start-up and after every server change
 * (`restarted`): forwards a SIGKILLed bridge left on its private server are removed, entries a
 * restarted server lost are forgotten. Emits `reconciled` {reason, removedStrays, forgotten} (or
 * {reason, error}).
 */
import { EventEmitter } from 'node:events';
import type { Logger } from '../observability/logger.ts';
import { parseEndpoint } from '../protocol/adb/endpoint.ts';
import { AdbClient } from './client.ts';
import { TcpAdbServerConnector } from './connector.ts';
import { DeviceLocks } from './device-lock.ts';
import { ForwardLedger, type ReconcileResult } from './forward-ledger.ts';
import { AdbServer, pingAdbServer } from './server.ts';
import { SocketDir } from './socket-dir.ts';
import { TunnelManager } from './tunnels.ts';

export interface AdbRuntimeOptions {
  /** `host:port` of an external adb server; otherwise the bridge runs its own on `port`. */
  external?: string;
  port: number;
  adbPath?: string;
  logger?: Logger;
  /** Reuse a server already answering on `port` (e.g. a CLI next to a running bridge). */
  reuseRunning?: boolean;
  /** Where the own server's pid file lives (the data dir): see `AdbServerOptions.stateDir`. */
  stateDir?: string;
}

export type ReconcileEvent =
  | ({ reason: 'start' | 'restarted' } & ReconcileResult)
  | { reason: 'start' | 'restarted'; error: string };

export class AdbRuntime extends EventEmitter {
  readonly server: AdbServer;
  readonly client: AdbClient;
  readonly tunnels: TunnelManager;
  readonly ledger: ForwardLedger;
  readonly locks = new DeviceLocks();
  readonly #logger: Logger | undefined;
  readonly #onRestarted = () => void this.reconcile('restarted');

  private constructor(server: AdbServer, logger?: Logger) {
    super();
    this.server = server;
    this.#logger = logger;
    this.client = new AdbClient(server.connector);
    this.tunnels = new TunnelManager({ client: this.client, server, ...(logger ? { logger } : {}) });
    // The bridge's own server runs on this host as the bridge's user: helper forwards can be unix
    // sockets in a private directory. An external server (another host, or not ours) keeps TCP.
    this.ledger = new ForwardLedger(this.client, {
      ownsServer: !server.external,
      ...(server.external ? {} : { sockets: new SocketDir('devicebridge-forward-') }),
    });
  }

  /** Reconcile the forward ledger with the server; never throws (the outcome is logged and emitted). */
  async reconcile(reason: 'start' | 'restarted'): Promise<ReconcileEvent> {
    let event: ReconcileEvent;
    try {
      event = { reason, ...(await this.ledger.reconcile({ timeoutMs: 10_000 })) };
      if (event.removedStrays.length > 0 || event.forgotten.length > 0) {
        this.#logger?.info(
          { reason, removedStrays: event.removedStrays, forgotten: event.forgotten.length },
          'forward ledger reconciled with the adb server',
        );
      }
    } catch (err) {
      event = { reason, error: (err as Error).message };
      this.#logger?.warn({ reason, err: event.error }, 'forward reconcile failed');
    }
    this.emit('reconciled', event);
    return event;
  }

  static async start(options: AdbRuntimeOptions): Promise<AdbRuntime> {
    let server: AdbServer;
    if (options.external) {
      const { host, port } = parseEndpoint(options.external);
      server = new AdbServer({
        host,
        port,
        external: true,
        ...(options.logger ? { logger: options.logger } : {}),
      });
    } else {
      const running =
        options.reuseRunning &&
        (await pingAdbServer(new TcpAdbServerConnector({ port: options.port }), 500).then(
          () => true,
          () => false,
        ));
      server = new AdbServer({
        port: options.port,
        external: running === true,
        ...(options.stateDir ? { stateDir: options.stateDir } : {}),
        ...(options.adbPath ? { adbPath: options.adbPath } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
      });
    }
    await server.start();
    const runtime = new AdbRuntime(server, options.logger);
    try {
      await runtime.tunnels.start();
      server.on('restarted', runtime.#onRestarted);
      await runtime.reconcile('start');
    } catch (err) {
      await runtime.close().catch(() => undefined);
      throw err;
    }
    return runtime;
  }

  async close(): Promise<void> {
    this.server.off('restarted', this.#onRestarted);
    this.tunnels.stop();
    await this.server.stop();
    await this.ledger.dispose();
  }
}
