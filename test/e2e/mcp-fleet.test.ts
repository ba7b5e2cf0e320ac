/**
 * `/mcp` on two `devicebridge serve` nodes sharing Redis: a session on the node without the device
 * leases it and drives it (its calls are forwarded to the node that drives it, as the API's are),
 * while a session on the other node sees the lease; ending the first session releases the lease, and
 * so does the shutdown of the node that holds the session.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { publishFixtureHelper } from '../support/cli.ts';
import { http, REDIS_URL, type ServeNode, startBridge, stopFleet, stopServeNode } from '../support/fleet.ts';

const prefix = `test:${randomUUID()}:`;

async function connect(url: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`));
  const client = new Client({ name: 'mcp-fleet-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  expect(result.isError ?? false, `${name}: ${text}`).toBe(false);
  return result;
}

describe('/mcp on two nodes (e2e, Redis)', () => {
  const redis = new Redis(REDIS_URL);
  const nodes: ServeNode[] = [];
  let tmp: { dir: string; cleanup(): Promise<void> } | undefined;

  afterAll(async () => {
    await stopFleet({ nodes, redis, prefix, tmp });
  }, 60_000);

  it('a session on the node without the device drives it; a session on the other sees it; the end releases it', async () => {
    tmp = await tempDir();
    const [dirA, dirB] = [path.join(tmp.dir, 'a'), path.join(tmp.dir, 'b')];
    await Promise.all([publishFixtureHelper(dirA), publishFixtureHelper(dirB)]);
    nodes.push(await startBridge(dirA, { prefix, name: 'node-a', simulate: 1 }));
    nodes.push(await startBridge(dirB, { prefix, name: 'node-b', simulate: 0 }));
    const [a, b] = nodes as [ServeNode, ServeNode];

    const onB = await connect(b.url);
    const acquired = await ok(onB.client, 'acquire_device', { waitSeconds: 30 });
    const { leaseId } = acquired.structuredContent as { leaseId: string };
    const snapshot = await ok(onB.client, 'snapshot', { leaseId, interactiveOnly: true });
    const line = (snapshot.content[0] as { text: string }).text
      .split('\n')
      .find((l) => l.includes('"CREATE"'));
    expect(line).toMatch(/^e\d+ button "CREATE"/);
    await ok(onB.client, 'tap', { leaseId, ref: line?.split(' ')[0] });

    const onA = await connect(a.url);
    const devices = await ok(onA.client, 'list_devices');
    expect(JSON.stringify(devices.structuredContent)).toContain(leaseId);
    // A session id of node b means nothing on node a: a new session is needed there.
    const foreign = await fetch(`${a.url}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': onB.transport.sessionId as string,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(foreign.status).toBe(404);

    await onB.transport.terminateSession();
    await onB.client.close();
    expect((await http(a.url, 'GET', `/v1/leases/${leaseId}`)).json.state).toBe('released');
    await onA.client.close();
  }, 120_000);

  it('a node that shuts down releases the leases of its sessions', async () => {
    const [a, b] = nodes as [ServeNode, ServeNode];
    const onB = await connect(b.url);
    const acquired = await ok(onB.client, 'acquire_device', { waitSeconds: 30 });
    const { leaseId } = acquired.structuredContent as { leaseId: string };
    expect((await http(a.url, 'GET', `/v1/leases/${leaseId}`)).json.state).toBe('active');
    expect(await stopServeNode(b)).toBe(0);
    expect((await http(a.url, 'GET', `/v1/leases/${leaseId}`)).json.state).toBe('released');
    await onB.client.close().catch(() => undefined);
  }, 120_000);
});
