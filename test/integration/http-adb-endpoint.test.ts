/**
 * Remote adb through the bridge over HTTP: `POST /v1/leases/{id}/adb` with
 * the client's adbkey.pub opens an endpoint the client's own adb (a second real adb server, its own
 * fresh key) connects to; release closes it; tenants cannot reach each other's; the CLI prints it.
 * Opening one needs the `adb` token capability (a full shell and installs with any flags), which
 * neither a plain client token nor one holding only `shell` has. Split into happy / error / security
 * cases.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../src/server/serve.ts';
import {
  ADB_TOKEN,
  ADMIN_TOKEN,
  CLIENT_TOKEN,
  type DeviceBridge,
  OTHER_ADB_TOKEN,
  SHELL_TOKEN,
  testDeviceBridge,
  testTokens,
} from '../support/bridge.ts';
import { runCli } from '../support/cli.ts';
import { type ClientAdb, startClientAdb } from '../support/client-adb.ts';
import { contractProblems } from '../support/contract.ts';

type Json = Record<string, unknown>;

let bridge: DeviceBridge;
let me: ClientAdb;

function call(token: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await bridge.app.request(path, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : null;
    // Every answer conforms to the route's documented response and error codes (contract).
    expect(contractProblems(method, path, res.status, json)).toEqual([]);
    return { status: res.status, body: json as Json };
  };
}

/** A client of tenant acme whose token holds the `adb` capability. */
const api = () => call(ADB_TOKEN);

async function acquire(token = ADB_TOKEN): Promise<{ id: string; deviceId: string }> {
  const res = await call(token)('POST', '/v1/leases', {
    selector: { labels: { simulated: 'true' } },
    ttlSeconds: 120,
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; deviceId: string };
}

/** The client adb's view of the endpoint after `adb connect`: `device` once authenticated. */
async function connectState(who: ClientAdb, endpoint: string): Promise<string> {
  await who.adb(['connect', endpoint]);
  let last = '';
  for (let i = 0; i < 30; i++) {
    const state = await who.adb(['-s', endpoint, 'get-state']);
    last = `${state.stdout.trim()} ${state.stderr.trim()}`;
    if (state.code === 0 && state.stdout.trim() === 'device') return 'device';
    await new Promise((r) => setTimeout(r, 100));
  }
  return last;
}

function tcpConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

beforeAll(async () => {
  bridge = await testDeviceBridge({ auth: testTokens({ withShell: true, withAdb: true }) });
  me = await startClientAdb();
}, 60_000);

afterAll(async () => {
  await me?.close();
  await bridge?.cleanup();
}, 60_000);

describe('adb endpoint over HTTP: happy path', () => {
  it('open → adb connect → adb shell → release closes the endpoint (teardown records it)', async () => {
    const lease = await acquire();
    const opened = await api()('POST', `/v1/leases/${lease.id}/adb`, { publicKey: me.publicKey });
    expect(opened.status).toBe(200);
    const endpoint = opened.body['endpoint'] as string;
    expect(opened.body).toMatchObject({
      leaseId: lease.id,
      deviceId: lease.deviceId,
      host: '127.0.0.1',
      endpoint: `127.0.0.1:${opened.body['port']}`,
      keyFingerprint: expect.stringMatching(/^sha256:/),
    });
    // The same key again: the same endpoint.
    expect((await api()('POST', `/v1/leases/${lease.id}/adb`, { publicKey: me.publicKey })).body).toEqual(
      opened.body,
    );

    expect(await connectState(me, endpoint)).toBe('device');
    const echo = await me.adb(['-s', endpoint, 'shell', 'echo', 'through', 'the', 'bridge']);
    expect(echo.stdout).toBe('through the bridge\n');

    const released = await api()('DELETE', `/v1/leases/${lease.id}`);
    expect(released.status).toBe(200);
    const teardown = (released.body['teardown'] as { actions: string[]; failures: string[] }) ?? {};
    expect(teardown.actions).toContainEqual(expect.stringMatching(`closed adb endpoint ${endpoint}`));
    expect(teardown.failures).toEqual([]);
    expect(await tcpConnect(opened.body['port'] as number)).toBe('ECONNREFUSED');
    const late = await me.adb(['-s', endpoint, 'shell', 'echo', 'late']);
    expect(late.stdout).not.toMatch(/late/);
    await me.adb(['disconnect', endpoint]);
  }, 90_000);

  it('expiry closes the endpoint too (teardown record, connections refused)', async () => {
    const acquired = await api()('POST', '/v1/leases', {
      selector: { labels: { simulated: 'true' } },
      ttlSeconds: 1,
    });
    expect(acquired.status).toBe(201);
    const id = acquired.body['id'] as string;
    const opened = await api()('POST', `/v1/leases/${id}/adb`, { publicKey: me.publicKey });
    expect(opened.status).toBe(200);
    const port = opened.body['port'] as number;
    expect(await tcpConnect(port)).toBe('connected');
    let teardown: { actions: string[] } | null = null;
    for (let i = 0; i < 100 && teardown === null; i++) {
      teardown = (await bridge.node.leases.store.getTeardown(id)) as { actions: string[] } | null;
      if (teardown === null) await new Promise((r) => setTimeout(r, 100));
    }
    expect(teardown?.actions).toContainEqual(expect.stringMatching(/^closed adb endpoint /));
    expect(await tcpConnect(port)).toBe('ECONNREFUSED');
  }, 60_000);

  it('the CLI prints host:port (and the JSON answer with --json)', async () => {
    const lease = await acquire();
    const server = await listen(bridge.app.fetch, { ...bridge.config, port: 0 }, '127.0.0.1');
    try {
      const env = { DEVICEBRIDGE_URL: server.url, DEVICEBRIDGE_TOKEN: ADB_TOKEN, LOG_LEVEL: 'silent' };
      const human = await runCli(['adb-endpoint', '--lease', lease.id, '--public-key', me.publicKeyFile], {
        env,
      });
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toMatch(/^127\.0\.0\.1:\d+\n$/);
      const json = await runCli(
        ['adb-endpoint', '--lease', lease.id, '--public-key', me.publicKeyFile, '--json'],
        { env },
      );
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ endpoint: human.stdout.trim(), leaseId: lease.id });
      const missing = await runCli(
        ['adb-endpoint', '--lease', lease.id, '--public-key', '/nonexistent.pub'],
        {
          env,
        },
      );
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/cannot read --public-key/);
    } finally {
      await api()('DELETE', `/v1/leases/${lease.id}`);
      await server.close();
    }
  }, 90_000);
});

describe('adb endpoint over HTTP: errors', () => {
  it('a malformed key is a 400 naming the problem; an ended lease is 410', async () => {
    const lease = await acquire();
    const bad = await api()('POST', `/v1/leases/${lease.id}/adb`, { publicKey: 'not-a-key user@host' });
    expect(bad.status).toBe(400);
    expect(bad.body['error']).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(/adb public key: the key is not base64/),
    });
    const missing = await api()('POST', `/v1/leases/${lease.id}/adb`, {});
    expect(missing.status).toBe(400);
    await api()('DELETE', `/v1/leases/${lease.id}`);
    const ended = await api()('POST', `/v1/leases/${lease.id}/adb`, { publicKey: me.publicKey });
    expect(ended.status).toBe(410);
  }, 60_000);
});

describe('adb endpoint over HTTP: security', () => {
  it('needs the adb capability: a plain client token and one holding only shell get 403 naming it', async () => {
    const lease = await acquire();
    try {
      for (const token of [CLIENT_TOKEN, SHELL_TOKEN]) {
        const refused = await call(token)('POST', `/v1/leases/${lease.id}/adb`, { publicKey: me.publicKey });
        expect(refused.status).toBe(403);
        const error = refused.body['error'] as Json;
        expect(error).toMatchObject({ code: 'PERMISSION_DENIED', details: { capability: 'adb' } });
        expect(error['message']).toContain('adb capability');
      }
      // Refused before the lease is looked at: an unknown lease id is 403 too, never 404.
      const unknown = await call(CLIENT_TOKEN)('POST', '/v1/leases/lease_0000000000000000000000/adb', {
        publicKey: me.publicKey,
      });
      expect(unknown.status).toBe(403);
      // The same tenant's token with the capability opens it; an admin holds every capability.
      const opened = await api()('POST', `/v1/leases/${lease.id}/adb`, { publicKey: me.publicKey });
      expect(opened.status).toBe(200);
      const admin = await call(ADMIN_TOKEN)('POST', `/v1/leases/${lease.id}/adb`, {
        publicKey: me.publicKey,
      });
      expect(admin.status).toBe(200);
      expect(admin.body['endpoint']).toBe(opened.body['endpoint']);
    } finally {
      await api()('DELETE', `/v1/leases/${lease.id}`);
    }
  }, 60_000);

  it('the CLI without the adb capability fails with PERMISSION_DENIED (exit 1)', async () => {
    const lease = await acquire();
    const server = await listen(bridge.app.fetch, { ...bridge.config, port: 0 }, '127.0.0.1');
    try {
      const env = { DEVICEBRIDGE_URL: server.url, DEVICEBRIDGE_TOKEN: CLIENT_TOKEN, LOG_LEVEL: 'silent' };
      const refused = await runCli(
        ['adb-endpoint', '--lease', lease.id, '--public-key', me.publicKeyFile, '--json'],
        { env },
      );
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout)).toMatchObject({
        ok: false,
        error: { code: 'PERMISSION_DENIED', details: { capability: 'adb' } },
      });
    } finally {
      await api()('DELETE', `/v1/leases/${lease.id}`);
      await server.close();
    }
  }, 60_000);

  it("another tenant cannot open an endpoint on the caller's lease (404, as if it did not exist)", async () => {
    const lease = await acquire();
    try {
      // A token of another tenant that holds the capability: tenancy still hides the lease.
      const other = await call(OTHER_ADB_TOKEN)('POST', `/v1/leases/${lease.id}/adb`, {
        publicKey: me.publicKey,
      });
      expect(other.status).toBe(404);
      expect((other.body['error'] as Json)['code']).toBe('NOT_FOUND');
    } finally {
      await api()('DELETE', `/v1/leases/${lease.id}`);
    }
  }, 60_000);

  it("another tenant's key does not authenticate on the caller's endpoint", async () => {
    const stranger = await startClientAdb();
    const lease = await acquire();
    try {
      const opened = await api()('POST', `/v1/leases/${lease.id}/adb`, { publicKey: me.publicKey });
      const endpoint = opened.body['endpoint'] as string;
      expect(await connectState(stranger, endpoint)).not.toBe('device');
      const shell = await stranger.adb(['-s', endpoint, 'shell', 'echo', 'intruder']);
      expect(shell.stdout).not.toMatch(/intruder/);
    } finally {
      await api()('DELETE', `/v1/leases/${lease.id}`);
      await stranger.close();
    }
  }, 60_000);

  it('thirty silent connections to the endpoint do not keep the registered adb client out', async () => {
    const lease = await acquire();
    const silent: net.Socket[] = [];
    try {
      const opened = await api()('POST', `/v1/leases/${lease.id}/adb`, { publicKey: me.publicKey });
      const endpoint = opened.body['endpoint'] as string;
      for (let i = 0; i < 30; i++) {
        const s = net.connect({ host: '127.0.0.1', port: opened.body['port'] as number });
        s.on('error', () => undefined);
        await new Promise<void>((resolve) => s.once('connect', () => resolve()));
        silent.push(s);
      }
      expect(await connectState(me, endpoint)).toBe('device');
      const echo = await me.adb(['-s', endpoint, 'shell', 'echo', 'still', 'in']);
      expect(echo.stdout).toBe('still in\n');
      await me.adb(['disconnect', endpoint]);
    } finally {
      for (const s of silent) s.destroy();
      await api()('DELETE', `/v1/leases/${lease.id}`);
    }
  }, 60_000);
});
