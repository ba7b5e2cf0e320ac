/**
 * `devicebridge mcp [--url URL] [--token TOKEN]`: an MCP server on stdin/stdout for a local AI agent,
 * driving the devices of a bridge (DEVICEBRIDGE_URL, DEVICEBRIDGE_TOKEN) through the typed client.
 * Runs until stdin closes (or SIGINT/SIGTERM); the leases it still holds are released then. Nothing but MCP messages
 * goes to stdout. Exit codes: 0 when stdin closed, 2 for a bad URL.
 */
import type { Command } from 'commander';
import { type ClientFlags, client } from './lease.ts';

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('MCP server on stdio for AI agents: the bridge’s devices as tools (see docs/mcp.md)')
    .option('--url <url>', 'bridge URL (env DEVICEBRIDGE_URL, default http://127.0.0.1:7100)')
    .option('--token <token>', 'bearer token (env DEVICEBRIDGE_TOKEN)')
    .action(async (opts: ClientFlags) => {
      const bridge = await client(opts);
      const { serveStdio } = await import('../mcp/stdio.ts');
      // Stopped by a signal: the leases are released first, as when stdin closes.
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
      try {
        await serveStdio(bridge, { signal: stop.signal });
      } finally {
        process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
      }
    });
}
