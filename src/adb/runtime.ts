/**
 * The ADB side of one bridge node: an adb server (the bridge's own on a private port, or an external
 * `ADB_SERVER`), the client, tunnels, the forward ledger and per-device locks. Built once at start.
 */
import type { Logger } from '../observability/logger.ts';
import { AdbClient } from './client.ts';
import { DeviceLocks } from './device-lock.ts';
import { ForwardLedger } from './forward-ledger.ts';
import { AdbServer, pingAdbServer } from './server.ts';
import { TunnelManager } from './tunnels.ts';

export interface AdbRuntimeOptions {
  /** `host:port` of an external adb server; otherwise the bridge runs its own on `port`. */
  external?: string;
  port: number;
  adbPath?: string;
  logger?: Logger;
  /** Reuse a server already answering on `port` (e.g. a CLI next to a running bridge). */
  reuseRunning?: boolean;
}

export class AdbRuntime {
  readonly server: AdbServer;
  readonly client: AdbClient;
  readonly tunnels: TunnelManager;
  readonly ledger: ForwardLedger;
  readonly locks = new DeviceLocks();

  private constructor(server: AdbServer, logger?: Logger) {
    this.server = server;
    this.client = new AdbClient({ host: server.host, port: server.port });
    this.tunnels = new TunnelManager({ client: this.client, server, ...(logger ? { logger } : {}) });
    this.ledger = new ForwardLedger(this.client, { ownsServer: !server.external });
  }

  static async start(options: AdbRuntimeOptions): Promise<AdbRuntime> {
    let server: AdbServer;
    if (options.external) {
      const [host = '127.0.0.1', port = '5037'] = options.external.split(':');
      server = new AdbServer({
        host,
        port: Number(port),
        external: true,
        ...(options.logger ? { logger: options.logger } : {}),
      });
    } else {
      const running =
        options.reuseRunning &&
        (await pingAdbServer('127.0.0.1', options.port, 500).then(
          () => true,
          () => false,
        ));
      server = new AdbServer({
        port: options.port,
        external: running === true,
        ...(options.adbPath ? { adbPath: options.adbPath } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
      });
    }
    await server.start();
    const runtime = new AdbRuntime(server, options.logger);
    try {
      await runtime.tunnels.start();
    } catch (err) {
      await runtime.close().catch(() => undefined);
      throw err;
    }
    return runtime;
  }

  async close(): Promise<void> {
    this.tunnels.stop();
    await this.server.stop();
  }
}
