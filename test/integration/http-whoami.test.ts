/**
 * `GET /v1/whoami`: who the caller is and what its token may do, through the app, the typed client
 * and the CLI. Split into happy / error / security cases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WhoamiSchema } from '../../src/api/index.ts';
import { CAPABILITIES } from '../../src/auth/tokens.ts';
import { BridgeClientError, DeviceBridgeClient } from '../../src/client/index.ts';
import {
  ADB_TOKEN,
  ADMIN_TOKEN,
  CLIENT_TOKEN,
  listenApp,
  OTHER_TENANT_TOKEN,
  SHELL_TOKEN,
  type TestBridge,
  testBridge,
  testTokens,
  timedRequest,
} from '../support/bridge.ts';
import { runCli } from '../support/cli.ts';

/** One bridge for both groups (happy path; errors and security). */
let bridge: TestBridge;
let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  bridge = await testBridge({ auth: testTokens({ withShell: true, withAdb: true }) });
  server = await listenApp(bridge.app);
});
afterAll(async () => {
  await server?.close();
  await bridge?.cleanup();
});

describe('whoami: happy path', () => {
  it('answers each token its name, tenant, role and capabilities (admins: every one)', async () => {
    const cases: Array<[string, unknown]> = [
      [ADMIN_TOKEN, { name: 'ops', tenant: 'acme', role: 'admin', capabilities: [...CAPABILITIES] }],
      [CLIENT_TOKEN, { name: 'ci', tenant: 'acme', role: 'client', capabilities: [] }],
      [OTHER_TENANT_TOKEN, { name: 'other', tenant: 'globex', role: 'client', capabilities: [] }],
      [SHELL_TOKEN, { name: 'ci-shell', tenant: 'acme', role: 'client', capabilities: ['shell'] }],
      [ADB_TOKEN, { name: 'ci-adb', tenant: 'acme', role: 'client', capabilities: ['adb'] }],
    ];
    for (const [token, expected] of cases) {
      const res = await timedRequest(bridge.app, 'GET', '/v1/whoami', undefined, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expected);
      // The documented schema, nothing more.
      expect(WhoamiSchema.strict().safeParse(res.body).success).toBe(true);
    }
    expect(CAPABILITIES).toContain('adb');
  });

  it('is per caller: never from a shared cache', async () => {
    const res = await bridge.app.request('/v1/whoami', {
      headers: { Authorization: `Bearer ${CLIENT_TOKEN}` },
    });
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('vary')).toContain('Authorization');
  });

  it('the OpenAPI document lists it with its named response schema', async () => {
    const doc = (await (await bridge.app.request('/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const op = doc.paths['/v1/whoami']?.['get'] as {
      operationId: string;
      responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
    };
    expect(op.operationId).toBe('whoami');
    expect(op.responses['200']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/Whoami',
    });
    expect(op.responses['401']).toBeDefined();
    expect(Object.keys(doc.components.schemas['Whoami']?.properties ?? {}).sort()).toEqual([
      'capabilities',
      'name',
      'role',
      'tenant',
    ]);
  });

  it('the typed client: whoami()', async () => {
    const me = await new DeviceBridgeClient({ baseUrl: server.url, token: ADB_TOKEN }).whoami();
    expect(me).toEqual({ name: 'ci-adb', tenant: 'acme', role: 'client', capabilities: ['adb'] });
  });

  it('the CLI: devicebridge whoami prints it for people, --json for scripts', async () => {
    const env = { DEVICEBRIDGE_URL: server.url, DEVICEBRIDGE_TOKEN: SHELL_TOKEN, LOG_LEVEL: 'silent' };
    const human = await runCli(['whoami'], { env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toBe('name: ci-shell\ntenant: acme\nrole: client\ncapabilities: shell\n');
    const json = await runCli(['whoami', '--json'], { env });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      name: 'ci-shell',
      tenant: 'acme',
      role: 'client',
      capabilities: ['shell'],
    });
    const plain = await runCli(['whoami'], { env: { ...env, DEVICEBRIDGE_TOKEN: CLIENT_TOKEN } });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('capabilities: none\n');
  }, 30_000);
});

describe('whoami: without tokens configured', () => {
  let bridge: TestBridge;
  beforeAll(async () => {
    bridge = await testBridge();
  });
  afterAll(async () => bridge?.cleanup());

  it('a loopback caller is the implicit admin, holding every capability', async () => {
    const res = await timedRequest(bridge.app, 'GET', '/v1/whoami');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      name: 'loopback',
      tenant: 'local',
      role: 'admin',
      capabilities: [...CAPABILITIES],
    });
  });
});

describe('whoami: errors and security', () => {
  it('no token is 401 UNAUTHENTICATED; an unknown or malformed token too', async () => {
    const anonymous = await timedRequest(bridge.app, 'GET', '/v1/whoami');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body['error']).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(String((anonymous.body['error'] as { message: string }).message)).toContain('DEVICEBRIDGE_TOKEN');
    const unknown = await timedRequest(bridge.app, 'GET', '/v1/whoami', undefined, { token: 'nope-token' });
    expect(unknown.status).toBe(401);
    expect(JSON.stringify(unknown.body)).not.toContain('nope-token');
    const malformed = await bridge.app.request('/v1/whoami', { headers: { Authorization: 'Basic abc' } });
    expect(malformed.status).toBe(401);
  });

  it('the typed client and the CLI report the 401', async () => {
    const error = await new DeviceBridgeClient({ baseUrl: server.url, token: 'nope-token' })
      .whoami()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BridgeClientError);
    expect((error as BridgeClientError).status).toBe(401);
    const cli = await runCli(['whoami', '--json'], {
      env: { DEVICEBRIDGE_URL: server.url, DEVICEBRIDGE_TOKEN: '', LOG_LEVEL: 'silent' },
    });
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout)).toMatchObject({ ok: false, error: { code: 'UNAUTHENTICATED' } });
  }, 30_000);
});
