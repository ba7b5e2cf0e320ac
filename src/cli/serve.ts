import type { Command } from 'commander';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Run the bridge HTTP service (embedded defaults: loopback, filesystem artifacts in ./var)')
    .option('--host <host>', 'bind address (env DEVICEBRIDGE_HOST, default 127.0.0.1)')
    .option('--port <port>', 'port, 0 for a free one (env DEVICEBRIDGE_PORT, default 7100)')
    .option('--data-dir <dir>', 'data directory (env DEVICEBRIDGE_DATA_DIR, default ./var)')
    .option('--json', 'print the listening address as one JSON line')
    .action(async (opts: { host?: string; port?: string; dataDir?: string; json?: boolean }) => {
      const { loadConfig } = await import('../config.ts');
      const { startServer } = await import('../server/serve.ts');
      const config = loadConfig(process.env, { host: opts.host, port: opts.port, dataDir: opts.dataDir });
      const server = await startServer(config);
      const line = opts.json
        ? JSON.stringify({
            url: server.url,
            port: server.port,
            dataDir: config.dataDir,
            store: server.services.store.description,
          })
        : `devicebridge listening on ${server.url} (artifacts: ${server.services.store.description})`;
      process.stdout.write(`${line}\n`);
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          server.services.logger.info({ signal }, 'shutting down');
          const force = setTimeout(() => process.exit(1), 10_000);
          force.unref();
          server.close().then(resolve, resolve);
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
    });
}
