import type { Command } from 'commander';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Run the bridge HTTP service (embedded defaults: loopback, filesystem artifacts in ./var)')
    .option('--host <host>', 'bind address (env DEVICEBRIDGE_HOST, default 127.0.0.1)')
    .option('--port <port>', 'port, 0 for a free one (env DEVICEBRIDGE_PORT, default 7100)')
    .option('--data-dir <dir>', 'data directory (env DEVICEBRIDGE_DATA_DIR, default ./var)')
    .option(
      '--simulate <n>',
      'start N simulated devices and register them, or auto: one when no real device is attached (env DEVICEBRIDGE_SIMULATE)',
    )
    .option('--no-devices', 'serve manifests and artifacts only (no adb, no leases)')
    .option('--json', 'print the listening address as one JSON line')
    .action(
      async (opts: {
        host?: string;
        port?: string;
        dataDir?: string;
        simulate?: string;
        devices?: boolean;
        json?: boolean;
      }) => {
        const { loadConfig } = await import('../config.ts');
        const { isRefusedStart } = await import('../server/serve.ts');
        const { startNode } = await import('../node/index.ts');
        const { simulatedDevices } = await import('./simulated-devices.ts');
        const { UsageError } = await import('./exit.ts');
        const config = loadConfig(process.env, {
          host: opts.host,
          port: opts.port,
          dataDir: opts.dataDir,
          simulate: opts.simulate,
          ...(opts.devices === false ? { devices: false } : {}),
        });
        let server: Awaited<ReturnType<typeof startNode>>;
        try {
          // The CLI owns the device sources: simulated devices when asked (`--simulate N|auto`).
          server = await startNode(config, { sources: [simulatedDevices(config.simulate)] });
        } catch (err) {
          // Refused input (devices file, simulated devices): a usage error, exit 2.
          if (isRefusedStart(err)) throw new UsageError((err as Error).message);
          throw err;
        }
        const devices = server.node
          ? (await server.node.devices.list()).map((d) => ({ id: d.id, serial: d.serial, state: d.state }))
          : null;
        const line = opts.json
          ? JSON.stringify({
              url: server.url,
              port: server.port,
              dataDir: config.dataDir,
              store: server.services.store.description,
              leases: server.node ? (config.redisUrl ? 'redis' : 'memory') : null,
              ...(server.deviceError ? { deviceError: server.deviceError } : {}),
              ...(server.metricsUrl ? { metricsUrl: server.metricsUrl } : {}),
              devices,
            })
          : `devicebridge listening on ${server.url} (artifacts: ${server.services.store.description}; ` +
            `devices: ${devices === null ? (server.deviceError ? `unavailable: ${server.deviceError}` : 'off') : `${devices.length}, leases in ${config.redisUrl ? 'redis' : 'memory'}`})`;
        process.stdout.write(`${line}\n`);
        await new Promise<void>((resolve) => {
          const stop = (signal: string) => {
            server.services.logger.info({ signal, graceMs: config.drainGraceMs }, 'draining');
            // Cleanup that hangs past the grace period and a margin is cut short: exit 1.
            const force = setTimeout(() => process.exit(1), config.drainGraceMs + 15_000);
            force.unref();
            server.close().then(
              () => {
                server.services.logger.info({ signal }, 'stopped');
                // Everything is stopped: exit 0 even when a stray handle would keep the loop alive.
                setTimeout(() => process.exit(0), 1000).unref();
                resolve();
              },
              (err: unknown) => {
                server.services.logger.error({ err: (err as Error).message }, 'shutdown failed');
                process.exit(1);
              },
            );
          };
          process.once('SIGTERM', () => stop('SIGTERM'));
          process.once('SIGINT', () => stop('SIGINT'));
        });
      },
    );
}
