/**
 * `devicebridge mcp` (stdio) spawned as an agent would, with the SDK's own stdio client, against a
 * served bridge with a simulated device: tools listed, a device acquired, a snapshot, released; and
 * the leases a session still holds are released when the agent goes away (stdin closes).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIENT_TOKEN,
  type DeviceBridge,
  listenApp,
  testDeviceBridge,
  testTokens,
  timedRequest,
} from '../support/bridge.ts';
import { BIN } from '../support/cli.ts';

let bridge: DeviceBridge;
let http: { url: string; close(): Promise<void> };

beforeAll(async () => {
  bridge = await testDeviceBridge({ simulate: 1, auth: testTokens() });
  http = await listenApp(bridge.app);
}, 120_000);

afterAll(async () => {
  await http?.close();
  await bridge?.cleanup();
});

async function spawnMcp(): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    env: {
      PATH: process.env['PATH'] ?? '',
      DEVICEBRIDGE_URL: http.url,
      DEVICEBRIDGE_TOKEN: CLIENT_TOKEN,
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

async function leaseState(id: string): Promise<string> {
  const res = await timedRequest(bridge.app, 'GET', `/v1/leases/${id}`, undefined, { token: CLIENT_TOKEN });
  return res.body['state'] as string;
}

describe('devicebridge mcp (stdio)', () => {
  it('lists tools, acquires, snapshots and releases', async () => {
    const { client } = await spawnMcp();
    try {
      const tools = (await client.listTools()).tools;
      expect(tools.map((t) => t.name)).toEqual(
        expect.arrayContaining([
          'list_devices',
          'acquire_device',
          'release_device',
          'snapshot',
          'tap',
          'type_text',
          'screenshot',
        ]),
      );
      for (const tool of tools) expect(tool.description, tool.name).toMatch(/\S/);
      const acquired = (await client.callTool({
        name: 'acquire_device',
        arguments: { waitSeconds: 20 },
      })) as CallToolResult;
      expect(acquired.isError ?? false, text(acquired)).toBe(false);
      const { leaseId } = acquired.structuredContent as { leaseId: string };
      expect(text(acquired)).toContain(`leaseId: ${leaseId}`);
      const snapshot = (await client.callTool({
        name: 'snapshot',
        arguments: { leaseId },
      })) as CallToolResult;
      expect(text(snapshot)).toMatch(/^e\d+ edit "Trips/m);
      const released = (await client.callTool({
        name: 'release_device',
        arguments: { leaseId },
      })) as CallToolResult;
      expect(released.isError ?? false, text(released)).toBe(false);
      expect(await leaseState(leaseId)).toBe('released');
    } finally {
      await client.close();
    }
  }, 60_000);

  it('releases the leases it still holds when the agent goes away', async () => {
    const { client, transport } = await spawnMcp();
    const acquired = (await client.callTool({
      name: 'acquire_device',
      arguments: { waitSeconds: 20 },
    })) as CallToolResult;
    const { leaseId } = acquired.structuredContent as { leaseId: string };
    expect(await leaseState(leaseId)).toBe('active');
    const exited = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
    });
    await client.close();
    await exited;
    // The process released the lease before it exited.
    expect(await leaseState(leaseId)).toBe('released');
  }, 60_000);
});
