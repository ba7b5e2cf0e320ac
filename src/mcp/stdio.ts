/**
 * `devicebridge mcp`: the MCP server on stdin/stdout for a local agent, talking to a bridge through
 * the typed client. Runs until stdin ends (the agent went away) or `signal` aborts; then releases the
 * leases the session still holds. Leases are renewed every `renewMs` meanwhile.
 */
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { DeviceBridgeClient } from '../client/index.ts';
import { PeriodicTask } from '../periodic.ts';
import { createMcpSession, releaseHeld, renewHeld } from './server.ts';

export interface StdioOptions {
  stdin?: Readable;
  stdout?: Writable;
  renewMs?: number;
  signal?: AbortSignal;
}

export async function serveStdio(client: DeviceBridgeClient, options: StdioOptions = {}): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const { server, state } = createMcpSession(() => client);
  const transport = new StdioServerTransport(stdin, options.stdout ?? process.stdout);
  const renewals = new PeriodicTask(options.renewMs ?? 60_000, () => renewHeld(state, client));
  const done = new Promise<void>((resolve) => {
    stdin.once('end', resolve);
    stdin.once('close', resolve);
    options.signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.connect(transport);
  renewals.start();
  try {
    await done;
  } finally {
    await renewals.stop();
    await releaseHeld(state, client);
    await server.close().catch(() => undefined);
  }
}
