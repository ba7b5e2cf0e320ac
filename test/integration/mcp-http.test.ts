/**
 * `/mcp` over Streamable HTTP with the SDK's own client against a bridge with simulated devices:
 * the whole flow (list, acquire, snapshot, tap by ref, type exact Unicode, read it back, screenshot,
 * wait_for, release), stale refs refused, tenancy, a session bound to its token, the session's end
 * releasing its leases, and bad arguments answered as tool errors in a session that goes on.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import {
  ADMIN_TOKEN,
  CLIENT_TOKEN,
  type DeviceBridge,
  listenApp,
  OTHER_TENANT_TOKEN,
  SHELL_TOKEN,
  tempDir,
  testDeviceBridge,
  testTokens,
  timedRequest,
} from '../support/bridge.ts';
import { publishGlassFixtures } from '../support/glass.ts';

/** A form screen the simulated app shows instead of its dialog: other nodes under the same refs. */
const FORM = [
  "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">",
  '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example.form" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[0,0][1080,2400]">',
  '<node index="0" text="" resource-id="com.example.form:id/name" class="android.widget.EditText" package="com.example.form" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="true" password="false" selected="false" visible-to-user="true" bounds="[0,100][1080,250]" />',
  '<node index="1" text="Save" resource-id="com.example.form:id/save" class="android.widget.Button" package="com.example.form" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[0,500][1080,650]" />',
  '</node></hierarchy>',
].join('');

let bridge: DeviceBridge;
let tmp: { dir: string; cleanup(): Promise<void> };
let http: { url: string; close(): Promise<void> };
const open: Array<{ client: Client; transport: StreamableHTTPClientTransport }> = [];

beforeAll(async () => {
  bridge = await testDeviceBridge({ simulate: 1, auth: testTokens({ withShell: true }) });
  tmp = await tempDir();
  await publishGlassFixtures(bridge.services.store, tmp.dir);
  http = await listenApp(bridge.app);
}, 120_000);

afterEach(async () => {
  // Sessions end as a client that closes properly ends them (DELETE), their leases with them.
  for (const { client, transport } of open.splice(0)) {
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  }
  // Whatever a test left behind: the one device must be free for the next.
  const leases = await timedRequest(bridge.app, 'GET', '/v1/leases', undefined, { token: ADMIN_TOKEN });
  for (const lease of leases.body['leases'] as Array<{ id: string }>)
    await timedRequest(bridge.app, 'DELETE', `/v1/leases/${lease.id}`, undefined, { token: ADMIN_TOKEN });
});

afterAll(async () => {
  await http?.close();
  await bridge?.cleanup();
  await tmp?.cleanup();
});

async function connect(token = CLIENT_TOKEN) {
  const transport = new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(transport);
  open.push({ client, transport });
  return { client, transport };
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** The ok answer of a tool (a tool error fails the test with its text). */
async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const result = await call(client, name, args);
  expect(result.isError ?? false, `${name}: ${text(result)}`).toBe(false);
  return result;
}

async function acquire(client: Client): Promise<string> {
  const result = await ok(client, 'acquire_device', { waitSeconds: 20 });
  const leaseId = (result.structuredContent as { leaseId: string }).leaseId;
  expect(text(result)).toContain(leaseId);
  return leaseId;
}

/** The line of `snapshot` text whose label is `label`. */
function lineOf(snapshot: string, label: string): string {
  const line = snapshot.split('\n').find((l) => l.includes(`"${label}`));
  expect(line, `no line for ${label} in\n${snapshot}`).toBeDefined();
  return line as string;
}

const refOf = (line: string) => line.split(' ')[0] as string;

describe('/mcp over Streamable HTTP', () => {
  it('lists, acquires, snapshots, taps by ref, types exact Unicode and reads it back, screenshots, waits, releases', async () => {
    const { client } = await connect();
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(
      expect.arrayContaining(['list_devices', 'acquire_device', 'snapshot', 'tap', 'type_text']),
    );

    const devices = await ok(client, 'list_devices');
    expect((devices.structuredContent as { devices: unknown[] }).devices).toHaveLength(1);
    const leaseId = await acquire(client);

    const first = text(await ok(client, 'snapshot', { leaseId }));
    // Refs are the API's: the same node under the same ref in the API's JSON tree.
    const api = await timedRequest(
      bridge.app,
      'POST',
      `/v1/leases/${leaseId}/snapshot`,
      {},
      { token: CLIENT_TOKEN },
    );
    const field = lineOf(first, 'Trips & \\"ideas\\"');
    expect(field).toMatch(/^e\d+ edit /);
    expect(field).toContain('focused');
    const apiNodes = JSON.stringify(api.body['snapshot']);
    expect(apiNodes).toContain(`"ref":"${refOf(field)}","type":"EditText"`);

    const create = lineOf(first, 'CREATE');
    expect(create).toMatch(/^e\d+ button "CREATE"/);
    const tapped = await ok(client, 'tap', { leaseId, ref: refOf(create) });
    // The centre of CREATE's bounds [784,1189][970,1315].
    expect(tapped.structuredContent).toEqual({ x: 877, y: 1252 });

    await ok(client, 'tap', { leaseId, ref: refOf(field) });
    const typed = 'Grüße 🚀 日本語';
    await ok(client, 'type_text', { leaseId, text: typed });
    const after = text(await ok(client, 'snapshot', { leaseId }));
    expect(lineOf(after, 'Trips & \\"ideas\\"')).toContain(
      JSON.stringify(`Trips & "ideas"${typed}`).slice(1, -1),
    );

    const shot = await ok(client, 'screenshot', { leaseId });
    const image = shot.content.find((c) => c.type === 'image');
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    const png = Buffer.from((image as { data: string }).data, 'base64');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const small = await ok(client, 'screenshot', { leaseId, maxWidth: 270 });
    const smallPng = Buffer.from(
      (small.content.find((c) => c.type === 'image') as { data: string }).data,
      'base64',
    );
    expect(smallPng.readUInt32BE(16)).toBe(270);
    expect(smallPng.readUInt32BE(16)).toBeLessThan(png.readUInt32BE(16));
    expect(text(small)).toMatch(/image scaled to 270x\d+/);

    expect(text(await ok(client, 'wait_for', { leaseId, text: typed, timeoutSeconds: 5 }))).toContain(
      'is there',
    );
    const missing = await call(client, 'wait_for', { leaseId, text: 'no such text', timeoutSeconds: 1 });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('TIMEOUT');

    await ok(client, 'release_device', { leaseId });
    const leases = await timedRequest(bridge.app, 'GET', '/v1/leases', undefined, { token: CLIENT_TOKEN });
    expect(leases.body['leases']).toEqual([]);
  }, 120_000);

  it('refuses a ref of an older snapshot once the screen changed under it, and a ref before any snapshot', async () => {
    const { client } = await connect();
    const leaseId = await acquire(client);
    const before = await call(client, 'tap', { leaseId, ref: 'e1' });
    expect(before.isError).toBe(true);
    expect(text(before)).toMatch(/NO_SNAPSHOT.*\nNext: call snapshot first/);

    const first = text(await ok(client, 'snapshot', { leaseId }));
    const cancel = refOf(lineOf(first, 'CANCEL'));
    const android = bridge.node.simulator!.devices[0]!.android as SimAndroidHandle;
    // Typing into the field does not move CANCEL: its ref still names it, the tap goes through.
    await ok(client, 'type_text', { leaseId, text: 'x' });
    const taps = android.inputEvents().length;
    await ok(client, 'tap', { leaseId, ref: cancel });
    expect(android.inputEvents().length).toBeGreaterThan(taps);

    // The app shows another screen: e2 of the first snapshot now names the form's name field.
    const dialog = android.device.screen.xml();
    android.device.screen.show(FORM);
    onTestFinished(() => android.device.screen.show(dialog));
    const events = android.inputEvents().length;
    const stale = await call(client, 'tap', { leaseId, ref: 'e2' });
    expect(stale.isError).toBe(true);
    expect(text(stale)).toMatch(/STALE_REF: the screen changed.*\nNext: take a new snapshot/);
    expect(android.inputEvents().length).toBe(events);
    const gone = await call(client, 'tap', { leaseId, ref: cancel });
    expect(text(gone)).toContain('STALE_REF');

    // A new snapshot gives refs that work again.
    const second = text(await ok(client, 'snapshot', { leaseId }));
    const name = second.split('\n').find((l) => l.includes('#name')) as string;
    expect(name).toMatch(/^e2 edit #name /);
    await ok(client, 'tap', { leaseId, ref: 'e2' });
    expect(text(await ok(client, 'snapshot', { leaseId }))).toMatch(/^e2 edit #name focused /m);
  }, 120_000);

  it('keeps tenants apart: another tenant sees no lease of the first and cannot use its lease id', async () => {
    const { client } = await connect();
    const leaseId = await acquire(client);
    const { client: other } = await connect(OTHER_TENANT_TOKEN);
    const devices = await ok(other, 'list_devices');
    expect(JSON.stringify(devices.structuredContent)).not.toContain(leaseId);
    const refused = await call(other, 'snapshot', { leaseId });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('NOT_FOUND');
    const release = await call(other, 'release_device', { leaseId });
    expect(release.isError).toBe(true);
    // Still held by the first tenant.
    const leases = await timedRequest(bridge.app, 'GET', '/v1/leases', undefined, { token: CLIENT_TOKEN });
    expect((leases.body['leases'] as Array<{ id: string }>).map((l) => l.id)).toEqual([leaseId]);
  }, 60_000);

  it('binds a session to the token that opened it', async () => {
    const { transport } = await connect();
    const res = await fetch(`${http.url}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${OTHER_TENANT_TOKEN}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': transport.sessionId as string,
        'Mcp-Protocol-Version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(403);
    const anonymous = await fetch(`${http.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(anonymous.status).toBe(401);
  });

  it('refuses a token a session past the most it may hold open, and serves it again once one ends', async () => {
    const opened = [];
    for (let i = 0; i < 32; i++) opened.push(await connect(OTHER_TENANT_TOKEN));
    await expect(connect(OTHER_TENANT_TOKEN)).rejects.toThrow(/429|open MCP sessions/);
    // Another token is not held back by this one's sessions.
    await connect(CLIENT_TOKEN);
    await opened[0]?.transport.terminateSession();
    await connect(OTHER_TENANT_TOKEN);
  }, 60_000);

  it('reads a message as the API reads a small body: size limit, strict JSON', async () => {
    const post = (body: string) =>
      fetch(`${http.url}/mcp`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${CLIENT_TOKEN}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body,
      });
    const huge = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x', params: { pad: 'a'.repeat(2 * 1024 * 1024) } }),
    );
    expect(huge.status).toBe(413);
    const duplicate = await post('{"jsonrpc":"2.0","id":1,"id":2,"method":"initialize"}');
    expect(duplicate.status).toBe(400);
    expect(JSON.stringify(await duplicate.json())).toContain('duplicate');
    expect(bridge.services.mcpSessions?.size).toBe(0);
  });

  it('releases the leases of a session when the session is deleted', async () => {
    const { client, transport } = await connect();
    const leaseId = await acquire(client);
    await transport.terminateSession();
    const lease = await timedRequest(bridge.app, 'GET', `/v1/leases/${leaseId}`, undefined, {
      token: CLIENT_TOKEN,
    });
    expect(lease.body['state']).toBe('released');
  }, 60_000);

  it('releases the leases of a session idle past the limit', async () => {
    const { client } = await connect();
    const leaseId = await acquire(client);
    const sessions = bridge.services.mcpSessions!;
    await sessions.sweep(Date.now() + 60 * 60_000);
    const lease = await timedRequest(bridge.app, 'GET', `/v1/leases/${leaseId}`, undefined, {
      token: CLIENT_TOKEN,
    });
    expect(lease.body['state']).toBe('released');
    const gone = await call(client, 'list_devices').catch((err: Error) => err);
    expect(gone).toBeInstanceOf(Error);
  }, 60_000);

  it('set_text replaces a field by ref; pinch; logcat and shell need the shell capability; an unknown APK is NOT_FOUND', async () => {
    const { client } = await connect();
    const leaseId = await acquire(client);
    const first = text(await ok(client, 'snapshot', { leaseId }));
    const field = refOf(lineOf(first, 'Trips'));
    await ok(client, 'set_text', { leaseId, ref: field, text: 'Ünïcode ✓' });
    const after = text(await ok(client, 'snapshot', { leaseId }));
    expect(after).toMatch(new RegExp(`^${field} edit "Ünïcode ✓"`, 'm'));
    const notField = await call(client, 'set_text', {
      leaseId,
      ref: refOf(lineOf(after, 'CREATE')),
      text: 'x',
    });
    expect(text(notField)).toContain('INVALID_ARGUMENT');

    await ok(client, 'pinch', { leaseId, x: 540, y: 1200, startDistance: 200, endDistance: 600 });
    // The device's log tells what every app on it does: like shell, it needs the shell capability.
    const refusedLog = await call(client, 'logcat', { leaseId, seconds: 0.5, lines: 5 });
    expect(refusedLog.isError).toBe(true);
    expect(text(refusedLog)).toMatch(/^PERMISSION_DENIED: .*shell capability/);
    expect(refusedLog.structuredContent).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });

    const shell = await call(client, 'shell', { leaseId, command: 'echo hi' });
    expect(text(shell)).toMatch(/^PERMISSION_DENIED: .*shell capability/);
    const install = await call(client, 'install_app', { leaseId, sha256: 'a'.repeat(64) });
    expect(install.isError).toBe(true);
    expect(text(install)).toMatch(/^NOT_FOUND: /);
    await ok(client, 'release_device', { leaseId });

    const { client: withShell } = await connect(SHELL_TOKEN);
    const shellLease = await acquire(withShell);
    const echoed = await ok(withShell, 'shell', { leaseId: shellLease, command: 'echo hi' });
    expect(text(echoed)).toContain('hi');
    const log = await ok(withShell, 'logcat', { leaseId: shellLease, seconds: 0.5, lines: 5 });
    expect((log.structuredContent as { count: number }).count).toBeLessThanOrEqual(5);
  }, 120_000);

  it('acquire_device waits for a busy device with progress notifications', async () => {
    const { client: holder } = await connect();
    const held = await acquire(holder);
    const { client: waiter } = await connect();
    const progress: number[] = [];
    const acquired = (await waiter.callTool(
      { name: 'acquire_device', arguments: { waitSeconds: 60 } },
      undefined,
      {
        timeout: 90_000,
        onprogress: (p) => {
          progress.push(p.progress);
          // The first notification: the waiter is queued; the holder lets the device go.
          if (progress.length === 1) void call(holder, 'release_device', { leaseId: held });
        },
      },
    )) as CallToolResult;
    expect(acquired.isError ?? false, text(acquired)).toBe(false);
    expect(progress.length).toBeGreaterThan(0);
    expect((acquired.structuredContent as { leaseId: string }).leaseId).not.toBe(held);
  }, 120_000);

  it('is in the OpenAPI document: POST, GET and DELETE with auth, the session header and media types', async () => {
    type Op = {
      summary?: string;
      security?: unknown[];
      'x-access'?: string;
      parameters?: Array<{ name: string; in: string; required?: boolean }>;
      requestBody?: { content: Record<string, unknown> };
      responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
    };
    const res = await timedRequest(bridge.app, 'GET', '/v1/openapi.json');
    const doc = res.body as unknown as { paths: Record<string, Record<string, Op>> };
    const mcp = doc.paths['/mcp'];
    expect(Object.keys(mcp ?? {}).sort()).toEqual(['delete', 'get', 'post']);
    for (const [method, op] of Object.entries(mcp ?? {})) {
      expect(op.summary, method).toBeTruthy();
      expect(op.security, method).toEqual([{ bearer: [] }]);
      expect(op['x-access'], method).toBe('client');
      const session = op.parameters?.find((p) => p.name === 'Mcp-Session-Id');
      expect(session, method).toMatchObject({ in: 'header', required: method !== 'post' });
      expect(op.responses['404']?.content?.['application/json']?.schema?.$ref, method).toBe(
        '#/components/schemas/McpError',
      );
      expect(op.responses, method).toHaveProperty('401');
    }
    expect(Object.keys(mcp!['post']!.requestBody!.content)).toEqual(['application/json']);
    expect(Object.keys(mcp!['post']!.responses['200']!.content!).sort()).toEqual([
      'application/json',
      'text/event-stream',
    ]);
    expect(mcp!['post']!.responses).toHaveProperty('202');
    expect(Object.keys(mcp!['get']!.responses['200']!.content!)).toEqual(['text/event-stream']);

    // The transport's own answers are documented (McpError) and carry the request id as the API's do.
    const noSession = await bridge.app.request('/mcp', {
      headers: {
        Authorization: `Bearer ${CLIENT_TOKEN}`,
        Accept: 'text/event-stream',
        'X-Request-Id': 'req-mcp-1',
      },
    });
    expect(noSession.status).toBe(400);
    expect(noSession.headers.get('x-request-id')).toBe('req-mcp-1');
    expect(await noSession.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
  });

  it('answers bad arguments with tool errors and the session goes on', async () => {
    const { client } = await connect();
    const cases: Array<[string, Record<string, unknown>]> = [
      ['tap', { leaseId: 'lease_x', ref: 'button' }],
      ['tap', { leaseId: 'lease_x' }],
      ['type_text', { leaseId: 'lease_x' }],
      ['snapshot', { leaseId: 'lease_nope' }],
      ['acquire_device', { waitSeconds: -1 }],
    ];
    for (const [name, args] of cases) {
      const result = await call(client, name, args);
      expect(result.isError, `${name} ${JSON.stringify(args)}: ${text(result)}`).toBe(true);
    }
    expect((await ok(client, 'list_devices')).structuredContent).toBeDefined();
  }, 60_000);
});
