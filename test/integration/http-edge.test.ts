/**
 * The HTTP edge against hostile input (issue #10): authorization before any body is read, body limits
 * enforced while streaming, media types, one helper-name rule, strict JSON bodies, rate limits.
 * Through app.request() over a real filesystem store; split into happy / error / security cases.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validateManifest } from '../../src/manifest/index.ts';
import {
  ADMIN_TOKEN,
  CLIENT_TOKEN,
  fixture,
  type TestBridge,
  testBridge,
  testTokens,
} from '../support/bridge.ts';

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const client = { Authorization: `Bearer ${CLIENT_TOKEN}` };

async function codeOf(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

describe('HTTP edge: security', () => {
  let bridge: TestBridge;
  beforeEach(async () => {
    bridge = await testBridge({ auth: testTokens() });
  });
  afterEach(async () => bridge.cleanup());

  it('one helper-name rule: "a..b" is refused by every route that takes a name', async () => {
    for (const url of ['/v1/helpers/a..b/manifest', '/v1/helpers/a..b/versions/1.0.0/manifest']) {
      const res = await bridge.app.request(url);
      expect(res.status, url).toBe(400);
      expect(await codeOf(res)).toBe('INVALID_ARGUMENT');
    }
    const publish = await bridge.app.request('/v1/helpers/a..b/releases?version=0.1.0', {
      method: 'POST',
      headers: { ...admin, 'Content-Type': 'application/vnd.android.package-archive' },
      body: new Uint8Array(16),
    });
    expect(publish.status).toBe(400);
    expect(await codeOf(publish)).toBe('INVALID_ARGUMENT');
  });

  it('a 401/403 never depends on the body: authorization is decided before the body is read', async () => {
    const bodies = [
      'not json at all',
      '{"endpoint":',
      '{"x":1}',
      JSON.stringify({ endpoint: '127.0.0.1:5555' }),
    ];
    for (const [url, role] of [
      ['/v1/devices', 'admin'],
      ['/v1/leases', 'client'],
      ['/v1/leases/lease_x/renew', 'client'],
      ['/v1/leases/lease_x/snapshot', 'client'],
      ['/v1/leases/lease_x/gestures', 'client'],
      ['/v1/leases/lease_x/helpers/android-snapshot-helper/ensure', 'client'],
      ['/v1/helpers/android-snapshot-helper/releases', 'admin'],
    ] as const) {
      for (const body of bodies) {
        const anon = await bridge.app.request(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body,
        });
        expect(anon.status, `${url} ${body}`).toBe(401);
        expect(await codeOf(anon)).toBe('UNAUTHENTICATED');
        if (role === 'admin') {
          const denied = await bridge.app.request(url, {
            method: 'POST',
            headers: { ...client, 'Content-Type': 'application/json' },
            body,
          });
          expect(denied.status, `${url} ${body}`).toBe(403);
          expect(await codeOf(denied)).toBe('PERMISSION_DENIED');
        }
      }
    }
  });

  it('the OpenAPI document declares security on /metrics, publish and every token route', async () => {
    const doc = (await (await bridge.app.request('/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    expect(doc.paths['/metrics']!['get']!.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/v1/helpers/{name}/releases']!['post']!.security).toEqual([{ bearer: [] }]);
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (p.startsWith('/v1/devices') || p.startsWith('/v1/leases'))
          expect(op.security, `${method} ${p}`).toBeTruthy();
      }
    }
  });

  it('the scheme of Authorization is case-insensitive (RFC 7235): "bearer" and "BEARER" work', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      const res = await bridge.app.request('/metrics', {
        headers: { Authorization: `${scheme} ${ADMIN_TOKEN}` },
      });
      expect(res.status, scheme).toBe(200);
    }
    const wrong = await bridge.app.request('/metrics', {
      headers: { Authorization: `Basic ${ADMIN_TOKEN}` },
    });
    expect(wrong.status).toBe(401);
  });
});

/** A body of `total` bytes sent as a stream without Content-Length (chunked on the wire). */
function streamed(prefix: string, total: number, fill = ' '): ReadableStream<Uint8Array> {
  const head = new TextEncoder().encode(prefix);
  const chunk = new TextEncoder().encode(fill.repeat(64 * 1024));
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent === 0) {
        controller.enqueue(head);
        sent += head.length;
        return;
      }
      if (sent >= total) return controller.close();
      controller.enqueue(chunk);
      sent += chunk.length;
    },
  });
}

describe('HTTP edge: errors', () => {
  let bridge: TestBridge;
  beforeEach(async () => {
    bridge = await testBridge({ auth: testTokens() });
  });
  afterEach(async () => bridge.cleanup());

  it('413 with the error envelope for a JSON body over the route limit, also when streamed without Content-Length', async () => {
    const big = `{"endpoint":"127.0.0.1:5555"${' '.repeat(1024 * 1024)}}`;
    const declared = await bridge.app.request('/v1/devices', {
      method: 'POST',
      headers: { ...admin, 'Content-Type': 'application/json' },
      body: big,
    });
    expect(declared.status).toBe(413);
    expect(await codeOf(declared)).toBe('PAYLOAD_TOO_LARGE');
    for (const url of ['/v1/devices', '/v1/leases', '/v1/manifests/validate']) {
      const chunked = await bridge.app.request(url, {
        method: 'POST',
        headers: { ...admin, 'Content-Type': 'application/json' },
        body: streamed('{"endpoint":"127.0.0.1:5555"', 2 * 1024 * 1024),
        duplex: 'half',
      } as RequestInit);
      expect(chunked.status, url).toBe(413);
      const body = (await chunked.json()) as { error: { code: string; requestId: string } };
      expect(body.error.code).toBe('PAYLOAD_TOO_LARGE');
      expect(body.error.requestId).toBe(chunked.headers.get('x-request-id'));
    }
  });

  it('415 UNSUPPORTED_MEDIA_TYPE for a body of a type the route does not take', async () => {
    for (const [url, type] of [
      ['/v1/devices', 'text/plain'],
      ['/v1/leases', 'application/x-www-form-urlencoded'],
      ['/v1/manifests/validate', 'text/xml'],
      ['/v1/helpers/android-snapshot-helper/releases?version=0.1.0', 'text/plain'],
    ] as const) {
      const res = await bridge.app.request(url, {
        method: 'POST',
        headers: { ...admin, 'Content-Type': type },
        body: '{}',
      });
      expect(res.status, url).toBe(415);
      expect(await codeOf(res)).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
  });
});

async function publishV1(bridge: TestBridge): Promise<void> {
  const res = await bridge.app.request('/v1/helpers/android-snapshot-helper/releases?version=0.1.0', {
    method: 'POST',
    headers: { ...admin, 'Content-Type': 'application/vnd.android.package-archive' },
    body: await readFile(fixture('snapshot-helper-v1.apk')),
  });
  expect(res.status, await res.clone().text()).toBe(201);
}

describe('HTTP edge: apkUrl comes from configuration, never from the request', () => {
  let bridge: TestBridge | undefined;
  afterEach(async () => {
    await bridge?.cleanup();
    bridge = undefined;
  });

  const hosts = ['evil.example', 'evil.example:443', '127.0.0.1:9', 'localhost'];

  it('without DEVICEBRIDGE_PUBLIC_URL: the loopback listen address, whatever the Host; the manifest validates', async () => {
    bridge = await testBridge({ auth: testTokens() });
    await publishV1(bridge);
    for (const host of hosts) {
      for (const path of [
        '/v1/helpers/android-snapshot-helper/manifest',
        '/v1/helpers/android-snapshot-helper/versions/0.1.0/manifest',
      ]) {
        const res = await bridge.app.request(`http://${host}${path}`, { headers: { Host: host } });
        expect(res.status).toBe(200);
        const manifest = (await res.json()) as { apkUrl: string; sha256: string };
        expect(manifest.apkUrl, host).toBe(`http://127.0.0.1:7100/v1/artifacts/${manifest.sha256}`);
        expect(validateManifest(manifest).errors).toEqual([]);
        // Public and cacheable: nothing in it depends on the request, so it varies on nothing.
        expect(res.headers.get('cache-control')).toMatch(/^public/);
        expect(res.headers.get('vary')).toBeNull();
      }
    }
  });

  it('with an https DEVICEBRIDGE_PUBLIC_URL (with a path): that origin and path; the manifest validates', async () => {
    bridge = await testBridge({
      auth: testTokens(),
      env: { DEVICEBRIDGE_PUBLIC_URL: 'https://bridge.example.com/devicebridge/' },
    });
    await publishV1(bridge);
    for (const host of hosts) {
      const res = await bridge.app.request(`http://${host}/v1/helpers/android-snapshot-helper/manifest`, {
        headers: { Host: host },
      });
      const manifest = (await res.json()) as { apkUrl: string; sha256: string };
      expect(manifest.apkUrl).toBe(`https://bridge.example.com/devicebridge/v1/artifacts/${manifest.sha256}`);
      expect(validateManifest(manifest).valid).toBe(true);
    }
  });
});

describe('HTTP edge: request bodies go through the strict JSON parser', () => {
  let bridge: TestBridge;
  beforeEach(async () => {
    bridge = await testBridge({ auth: testTokens() });
  });
  afterEach(async () => bridge.cleanup());

  const post = (path: string, body: string) =>
    bridge.app.request(path, {
      method: 'POST',
      headers: { ...admin, 'Content-Type': 'application/json' },
      body,
    });

  it('POST /v1/manifests/validate: a 5,000-deep unknown field is valid:false naming the depth limit, never 500', async () => {
    const res = await post(
      '/v1/manifests/validate',
      `{"name":"x","x":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    );
    expect(res.status).toBe(200);
    const verdict = (await res.json()) as {
      valid: boolean;
      manifest: unknown;
      errors: Array<{ path: string; message: string }>;
    };
    expect(verdict.valid).toBe(false);
    expect(verdict.manifest).toBeNull();
    expect(verdict.errors[0]!.message).toMatch(/64/);
    expect(verdict.errors[0]!.message).toMatch(/deep|depth|nest/i);
  });

  it('POST /v1/manifests/validate: duplicate and prototype keys are valid:false naming the key', async () => {
    const dup = await post('/v1/manifests/validate', '{"sha256":"a","sha256":"b"}');
    const dupVerdict = (await dup.json()) as {
      valid: boolean;
      errors: Array<{ path: string; message: string }>;
    };
    expect(dupVerdict.valid).toBe(false);
    expect(dupVerdict.errors[0]!.message).toContain('"sha256"');
    expect(dupVerdict.errors[0]!.path).toBe('sha256');
    const proto = await post(
      '/v1/manifests/validate',
      '{"__proto__":{"installArgs":["install","--user","0"]}}',
    );
    const protoVerdict = (await proto.json()) as { valid: boolean; errors: Array<{ message: string }> };
    expect(protoVerdict.valid).toBe(false);
    expect(protoVerdict.errors[0]!.message).toContain('__proto__');
  });

  it('a body that is not JSON is 400 without echoing it', async () => {
    const res = await post('/v1/manifests/validate', 'secret-value-xyz');
    expect(res.status).toBe(400);
    expect(await res.text()).not.toContain('secret-value-xyz');
  });

  it('control routes refuse duplicate keys, prototype keys and deep nesting with 400 naming the rule', async () => {
    for (const [path, body, needle] of [
      ['/v1/leases', '{"selector":{},"selector":{"deviceId":"x"}}', '"selector"'],
      ['/v1/leases', '{"selector":{"labels":{"__proto__":"x"}}}', '__proto__'],
      ['/v1/devices', '{"endpoint":"127.0.0.1:5555","endpoint":"10.0.0.1:5555"}', '"endpoint"'],
      ['/v1/devices', `{"labels":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`, '64'],
      ['/v1/leases/lease_x/gestures', '{"kind":"tap","x":1,"y":1,"constructor":{}}', 'constructor'],
    ] as const) {
      const res = await post(path, body);
      expect(res.status, `${path} ${body.slice(0, 40)}`).toBe(400);
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.message, path).toContain(needle);
    }
  });
});
