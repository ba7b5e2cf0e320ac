/**
 * `/mcp` on `devicebridge serve` nodes sharing Redis. A session lives on the node that opened it, and
 * any node serves it: a session opened on the node without the device is driven through the node
 * that has it (every request after initialize, the GET event stream and DELETE sent there, forwarded
 * to the session's node, whose tool calls are forwarded back to the device's node), with the same
 * token checks; its DELETE releases its leases. A session whose node shut down answers 404 on the
 * others (and its node released its leases); a session whose node crashed answers 404 once the node
 * left the directory, and its leases end by their TTL, no longer renewed.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { CLIENT_TOKEN, OTHER_TENANT_TOKEN, tempDir, writeTokensFile } from '../support/bridge.ts';
import { publishFixtureHelper } from '../support/cli.ts';
import { REDIS_URL, type ServeNode, startBridge, stopFleet, stopServeNode } from '../support/fleet.ts';
import { waitFor } from '../support/wait-for.ts';

const prefix = `test:${randomUUID()}:`;
const FORWARDED_BY = 'x-devicebridge-forwarded-by';

interface Sent {
  method: string;
  /** The node the request was sent to. */
  to: string;
  status: number;
  contentType: string | null;
  /** The node that answered a forwarded request (null: answered where sent). */
  forwardedBy: string | null;
}

/**
 * An SDK client whose initialize goes to `first` and every later request (they carry the session
 * id) to `then`; each request and its answer is recorded.
 */
async function connectAcross(first: ServeNode, then: ServeNode, token = CLIENT_TOKEN) {
  const sent: Sent[] = [];
  const across: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    const node = headers.has('mcp-session-id') ? then : first;
    const url = new URL(input instanceof Request ? input.url : String(input));
    const target = new URL(url.pathname + url.search, node.url);
    const answer = await fetch(target, init);
    sent.push({
      method: init?.method ?? 'GET',
      to: node.name ?? node.url,
      status: answer.status,
      contentType: answer.headers.get('content-type'),
      forwardedBy: answer.headers.get(FORWARDED_BY),
    });
    return answer;
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${first.url}/mcp`), {
    fetch: across,
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'mcp-fleet-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, sent };
}

async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  expect(result.isError ?? false, `${name}: ${text}`).toBe(false);
  return result;
}

async function leaseState(node: ServeNode, leaseId: string): Promise<string> {
  const res = await fetch(`${node.url}/v1/leases/${leaseId}`, {
    headers: { Authorization: `Bearer ${CLIENT_TOKEN}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { state: string }).state;
}

/** One raw JSON-RPC POST to `/mcp` of `node` with a session id. */
function rawPost(node: ServeNode, sessionId: string, token: string | null = CLIENT_TOKEN) {
  return fetch(`${node.url}/mcp`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Mcp-Session-Id': sessionId,
      'Mcp-Protocol-Version': '2025-06-18',
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
}

describe('/mcp sessions across nodes (e2e, Redis)', () => {
  const redis = new Redis(REDIS_URL);
  const nodes: ServeNode[] = [];
  let tmp: { dir: string; cleanup(): Promise<void> } | undefined;
  let env: Record<string, string> = {};

  afterAll(async () => {
    await stopFleet({ nodes, redis, prefix, tmp });
  }, 60_000);

  it('a session opened on one node is driven through another: tools, the event stream, DELETE', async () => {
    tmp = await tempDir();
    env = { DEVICEBRIDGE_TOKENS_FILE: await writeTokensFile(tmp.dir) };
    const [dirA, dirB] = [path.join(tmp.dir, 'a'), path.join(tmp.dir, 'b')];
    await Promise.all([publishFixtureHelper(dirA), publishFixtureHelper(dirB)]);
    nodes.push(await startBridge(dirA, { prefix, name: 'node-a', simulate: 1, env }));
    nodes.push(await startBridge(dirB, { prefix, name: 'node-b', simulate: 0, env }));
    const [a, b] = nodes as [ServeNode, ServeNode];

    // Opened on node b (no device there); everything after initialize goes to node a.
    const { client, transport, sent } = await connectAcross(b, a);
    const sessionId = transport.sessionId as string;
    expect(sessionId.startsWith('node-b~')).toBe(true);
    const acquired = await ok(client, 'acquire_device', { waitSeconds: 30 });
    const { leaseId } = acquired.structuredContent as { leaseId: string };
    const snapshot = await ok(client, 'snapshot', { leaseId, interactiveOnly: true });
    const line = (snapshot.content[0] as { text: string }).text
      .split('\n')
      .find((l) => l.includes('"CREATE"'));
    expect(line).toMatch(/^e\d+ button "CREATE"/);
    await ok(client, 'tap', { leaseId, ref: line?.split(' ')[0] });

    // Every request after initialize went to node a and was answered by node b, the session's node;
    // tool calls as event streams, relayed as they came.
    const later = sent.slice(1);
    expect(sent[0]).toMatchObject({ method: 'POST', to: 'node-b', forwardedBy: null, status: 200 });
    expect(later.filter((s) => s.method === 'POST').length).toBeGreaterThanOrEqual(4);
    for (const s of later) expect(s).toMatchObject({ to: 'node-a', forwardedBy: 'node-b' });
    expect(later.filter((s) => s.contentType?.startsWith('text/event-stream')).length).toBeGreaterThanOrEqual(
      3,
    );
    // The client's GET event stream, opened through node a, is node b's.
    const get = await waitFor(() => sent.find((s) => s.method === 'GET'), { what: 'the GET event stream' });
    expect(get).toMatchObject({ to: 'node-a', forwardedBy: 'node-b', status: 200 });
    expect(get.contentType).toMatch(/^text\/event-stream/);
    // ...so a second one through node a is refused by node b: one per session.
    const second = await fetch(`${a.url}/mcp`, {
      headers: {
        Accept: 'text/event-stream',
        'Mcp-Session-Id': sessionId,
        'Mcp-Protocol-Version': '2025-06-18',
        Authorization: `Bearer ${CLIENT_TOKEN}`,
      },
    });
    expect(second.status).toBe(409);
    expect(second.headers.get(FORWARDED_BY)).toBe('node-b');
    await second.body?.cancel();

    // The same checks as on the session's node: no token is refused where it arrives (never
    // forwarded); another tenant's token is refused by the session's node.
    const anonymous = await rawPost(a, sessionId, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get(FORWARDED_BY)).toBeNull();
    const stranger = await rawPost(a, sessionId, OTHER_TENANT_TOKEN);
    expect(stranger.status).toBe(403);
    expect(stranger.headers.get(FORWARDED_BY)).toBe('node-b');
    // A session id naming no live node: gone, start a new session.
    const nowhere = await rawPost(a, `node-z~${randomUUID()}`);
    expect(nowhere.status).toBe(404);
    expect(JSON.stringify(await nowhere.json())).toContain('node-z is gone');

    expect(await leaseState(a, leaseId)).toBe('active');
    await transport.terminateSession();
    const deleted = sent.at(-1);
    expect(deleted).toMatchObject({ method: 'DELETE', to: 'node-a', forwardedBy: 'node-b', status: 200 });
    expect(await leaseState(a, leaseId)).toBe('released');
    await client.close();
    expect((await rawPost(a, sessionId)).status).toBe(404);
  }, 180_000);

  it('a node that shuts down releases the leases of its sessions; their ids answer 404 on the others', async () => {
    const [a, b] = nodes as [ServeNode, ServeNode];
    const { client, transport } = await connectAcross(b, a);
    const sessionId = transport.sessionId as string;
    const acquired = await ok(client, 'acquire_device', { waitSeconds: 30 });
    const { leaseId } = acquired.structuredContent as { leaseId: string };
    expect(await leaseState(a, leaseId)).toBe('active');
    expect(await stopServeNode(b)).toBe(0);
    expect(await leaseState(a, leaseId)).toBe('released');
    const gone = await rawPost(a, sessionId);
    expect(gone.status).toBe(404);
    expect(JSON.stringify(await gone.json())).toContain('node-b is gone');
    await client.close().catch(() => undefined);
  }, 120_000);

  it('a crashed node: its sessions answer 404 once it left the directory; their leases end by their TTL', async () => {
    const [a] = nodes as [ServeNode];
    const dirC = path.join(tmp!.dir, 'c');
    await publishFixtureHelper(dirC);
    const c = await startBridge(dirC, {
      prefix,
      name: 'node-c',
      simulate: 0,
      env: { ...env, DEVICEBRIDGE_HEARTBEAT_MS: '300' },
    });
    nodes.push(c);
    const { client, transport } = await connectAcross(c, a);
    const sessionId = transport.sessionId as string;
    const acquired = await ok(client, 'acquire_device', { waitSeconds: 30, ttlSeconds: 30 });
    const { leaseId } = acquired.structuredContent as { leaseId: string };
    expect((await rawPost(a, sessionId)).headers.get(FORWARDED_BY)).toBe('node-c');

    c.child.kill('SIGKILL');
    // Until its heartbeat entry runs out the node is unreachable (503, retry); then it is gone.
    const gone = await waitFor(
      async () => {
        const res = await rawPost(a, sessionId);
        const body = await res.text();
        if (res.status === 503) expect(body).toContain('node-c');
        return res.status === 404 ? body : null;
      },
      { what: 'a 404 for the crashed node’s session', timeoutMs: 20_000 },
    );
    expect(gone).toContain('node-c is gone');
    // Nobody renews the lease now: it ends by its TTL, as any lease.
    await waitFor(async () => (await leaseState(a, leaseId)) !== 'active', {
      what: 'the lease of the crashed node’s session to end',
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    expect(await leaseState(a, leaseId)).toBe('expired');
    await client.close().catch(() => undefined);
  }, 150_000);
});
