/**
 * Helper manifests, artifacts, validation and publishing through the HTTP app (app.request), over a
 * real filesystem artifact store in a temp dir. Split into happy / error / security cases.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  CLIENT_TOKEN,
  fixture,
  type TestBridge,
  testBridge,
  testTokens,
} from '../support/bridge.ts';

const V1 = fixture('snapshot-helper-v1.apk');
const V2 = fixture('snapshot-helper-v2.apk');
const V1_REBUILT = fixture('snapshot-helper-v1-rebuilt.apk');

async function sha256Of(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

async function upload(
  bridge: TestBridge,
  file: string,
  version: string,
  options: { token?: string; name?: string; installArgs?: string; runner?: string; raw?: boolean } = {},
): Promise<Response> {
  const name = options.name ?? 'android-snapshot-helper';
  const headers: Record<string, string> = {};
  if (options.token) headers['Authorization'] = `Bearer ${options.token}`;
  const bytes = await readFile(file);
  if (options.raw) {
    const q = new URLSearchParams({ version });
    if (options.installArgs) q.set('installArgs', options.installArgs);
    if (options.runner) q.set('runner', options.runner);
    return bridge.app.request(`/v1/helpers/${name}/releases?${q}`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/vnd.android.package-archive' },
      body: bytes,
    });
  }
  const form = new FormData();
  form.set('apk', new File([bytes], 'helper.apk'));
  form.set('version', version);
  if (options.installArgs) form.set('installArgs', options.installArgs);
  if (options.runner) form.set('runner', options.runner);
  return bridge.app.request(`/v1/helpers/${name}/releases`, { method: 'POST', headers, body: form });
}

describe('helpers and artifacts: happy path', () => {
  let bridge: TestBridge;
  beforeEach(async () => {
    bridge = await testBridge();
  });
  afterEach(async () => bridge.cleanup());

  it('publishes over HTTP, serves the manifest with an apkUrl to its own artifact, and the bytes', async () => {
    const res = await upload(bridge, V1, '0.1.0');
    expect(res.status).toBe(201);
    const body = (await res.json()) as { status: string; latest: boolean; manifest: Record<string, unknown> };
    expect(body.status).toBe('published');
    expect(body.latest).toBe(true);
    const sha = await sha256Of(V1);
    expect(body.manifest).toMatchObject({
      name: 'android-snapshot-helper',
      version: '0.1.0',
      sha256: sha,
      packageName: 'com.callstack.agentdevice.snapshothelper',
      versionCode: 1,
      instrumentationRunner: 'com.callstack.agentdevice.snapshothelper/.SnapshotInstrumentation',
      installArgs: ['install', '-r', '-t'],
      outputFormat: 'uiautomator-xml',
      statusProtocol: 'android-snapshot-helper-v1',
    });

    const latest = await bridge.app.request(
      'http://localhost:7100/v1/helpers/android-snapshot-helper/manifest',
    );
    expect(latest.status).toBe(200);
    expect(latest.headers.get('cache-control')).toContain('max-age');
    const manifest = (await latest.json()) as { apkUrl: string; sha256: string };
    // From configuration (here the loopback listen address), never from the request's Host
    // (without tokens only loopback names are served: another loopback name stands in).
    expect(manifest.apkUrl).toBe(`http://127.0.0.1:7100/v1/artifacts/${sha}`);

    const artifact = await bridge.app.request(new URL(manifest.apkUrl).pathname);
    expect(artifact.status).toBe(200);
    expect(artifact.headers.get('content-type')).toBe('application/vnd.android.package-archive');
    expect(artifact.headers.get('etag')).toBe(`"${sha}"`);
    const bytes = Buffer.from(await artifact.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(sha);
  });

  it('answers If-None-Match with 304 and a changed manifest with a new ETag', async () => {
    expect((await upload(bridge, V1, '0.1.0')).status).toBe(201);
    const first = await bridge.app.request('/v1/helpers/android-snapshot-helper/manifest');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    const again = await bridge.app.request('/v1/helpers/android-snapshot-helper/manifest', {
      headers: { 'If-None-Match': etag },
    });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');

    expect((await upload(bridge, V2, '0.2.0')).status).toBe(201);
    const changed = await bridge.app.request('/v1/helpers/android-snapshot-helper/manifest', {
      headers: { 'If-None-Match': etag },
    });
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as { version: string }).version).toBe('0.2.0');
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('lists helpers and serves each version; latest only moves forwards', async () => {
    expect((await upload(bridge, V2, '0.2.0')).status).toBe(201);
    const older = await upload(bridge, V1, '0.1.0', { raw: true });
    expect(older.status).toBe(201);
    expect(((await older.json()) as { latest: boolean }).latest).toBe(false);
    const list = (await (await bridge.app.request('/v1/helpers')).json()) as {
      helpers: Array<{ name: string; latest: string; versions: string[] }>;
    };
    expect(list.helpers).toEqual([
      { name: 'android-snapshot-helper', latest: '0.2.0', versions: ['0.1.0', '0.2.0'] },
    ]);
    const v1 = await bridge.app.request('/v1/helpers/android-snapshot-helper/versions/0.1.0/manifest');
    expect(((await v1.json()) as { versionCode: number }).versionCode).toBe(1);
  });

  it('republishing identical bytes is a no-op (200 unchanged)', async () => {
    expect((await upload(bridge, V1, '0.1.0')).status).toBe(201);
    const again = await upload(bridge, V1, '0.1.0');
    expect(again.status).toBe(200);
    expect(((await again.json()) as { status: string }).status).toBe('unchanged');
  });

  it('serves byte ranges, HEAD and 416', async () => {
    expect((await upload(bridge, V1, '0.1.0')).status).toBe(201);
    const sha = await sha256Of(V1);
    const all = await readFile(V1);
    const part = await bridge.app.request(`/v1/artifacts/${sha}`, { headers: { Range: 'bytes=2-9' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 2-9/${all.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(all.subarray(2, 10));
    const suffix = await bridge.app.request(`/v1/artifacts/${sha}`, { headers: { Range: 'bytes=-4' } });
    expect(Buffer.from(await suffix.arrayBuffer())).toEqual(all.subarray(all.length - 4));
    const head = await bridge.app.request(`/v1/artifacts/${sha}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(all.length));
    const beyond = await bridge.app.request(`/v1/artifacts/${sha}`, {
      headers: { Range: `bytes=${all.length}-` },
    });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${all.length}`);
  });

  it('validates manifests with a 200 verdict either way', async () => {
    expect((await upload(bridge, V1, '0.1.0')).status).toBe(201);
    const manifest = await (await bridge.app.request('/v1/helpers/android-snapshot-helper/manifest')).json();
    const ok = await bridge.app.request('/v1/manifests/validate', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(manifest),
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ valid: true, errors: [] });
    const bad = await bridge.app.request('/v1/manifests/validate', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...(manifest as object), installArgs: ['install', '-r', '--user', '0'] }),
    });
    expect(bad.status).toBe(200);
    const verdict = (await bad.json()) as {
      valid: boolean;
      manifest: unknown;
      errors: Array<{ path: string }>;
    };
    expect(verdict.valid).toBe(false);
    expect(verdict.manifest).toBeNull();
    expect(verdict.errors.map((e) => e.path)).toContain('installArgs.2');
  });

  it('documents every route in /v1/openapi.json and exposes metrics', async () => {
    const doc = (await (await bridge.app.request('/v1/openapi.json')).json()) as {
      paths: Record<string, unknown>;
    };
    for (const p of [
      '/healthz',
      '/readyz',
      '/metrics',
      '/v1/helpers',
      '/v1/helpers/{name}/manifest',
      '/v1/helpers/{name}/versions/{version}/manifest',
      '/v1/artifacts/{sha256}',
      '/v1/manifests/validate',
      '/v1/helpers/{name}/releases',
    ]) {
      expect(doc.paths, p).toHaveProperty([p]);
    }
    await bridge.app.request('/healthz');
    const metrics = await (await bridge.app.request('/metrics')).text();
    expect(metrics).toMatch(
      /devicebridge_http_requests_total\{method="GET",route="\/healthz",status="200"\} 1/,
    );
    expect((await bridge.app.request('/readyz')).status).toBe(200);
  });
});

describe('helpers and artifacts: errors', () => {
  let bridge: TestBridge;
  beforeEach(async () => {
    bridge = await testBridge({ env: { DEVICEBRIDGE_MAX_UPLOAD_BYTES: '4096' } });
  });
  afterEach(async () => bridge.cleanup());

  it('refuses different bytes for a published version with 409 and keeps the original', async () => {
    await bridge.cleanup();
    bridge = await testBridge();
    expect((await upload(bridge, V1, '0.1.0')).status).toBe(201);
    const res = await upload(bridge, V1_REBUILT, '0.1.0');
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: { code: string; message: string; requestId: string } };
    expect(body.error.code).toBe('CONFLICT');
    expect(body.error.message).toContain('immutable');
    expect(body.error.requestId).toBe(res.headers.get('x-request-id'));
    const kept = (await (
      await bridge.app.request('/v1/helpers/android-snapshot-helper/manifest')
    ).json()) as {
      sha256: string;
    };
    expect(kept.sha256).toBe(await sha256Of(V1));
  });

  it('413 for an upload above the configured cap', async () => {
    const res = await upload(bridge, V1, '0.1.0', { raw: true });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
    const multipart = await upload(bridge, V1, '0.1.0');
    expect(multipart.status).toBe(413);
  });

  it('400 naming the problem for bad installArgs, version mismatch and a foreign runner', async () => {
    await bridge.cleanup();
    bridge = await testBridge();
    const args = await upload(bridge, V1, '0.1.0', { installArgs: 'install -r --user 0' });
    expect(args.status).toBe(400);
    const argsBody = (await args.json()) as {
      error: { code: string; details: { errors: Array<{ path: string }> } };
    };
    expect(argsBody.error.code).toBe('INSTALL_ARGS_REJECTED');
    expect(argsBody.error.details.errors[0]?.path).toBe('installArgs.2');

    const mismatch = await upload(bridge, V1, '9.9.9');
    expect(mismatch.status).toBe(400);
    expect(((await mismatch.json()) as { error: { message: string } }).error.message).toContain(
      'versionName 0.1.0',
    );

    const runner = await upload(bridge, V1, '0.1.0', { runner: 'com.example.other/.Runner' });
    expect(runner.status).toBe(400);
    expect(((await runner.json()) as { error: { message: string } }).error.message).toContain(
      'does not match',
    );

    const notApk = await bridge.app.request('/v1/helpers/android-snapshot-helper/releases?version=0.1.0', {
      method: 'POST',
      headers: { 'Content-Type': 'application/vnd.android.package-archive' },
      body: 'definitely not a zip',
    });
    expect(notApk.status).toBe(400);
    expect((await bridge.app.request('/v1/helpers')).status).toBe(200);
    const list = (await (await bridge.app.request('/v1/helpers')).json()) as { helpers: unknown[] };
    expect(list.helpers).toEqual([]);
  });

  it('404 for unknown helpers, versions, artifacts and routes, with the envelope', async () => {
    for (const url of [
      '/v1/helpers/nope/manifest',
      '/v1/helpers/nope/versions/1.0.0/manifest',
      `/v1/artifacts/${'a'.repeat(64)}`,
      '/v1/nothing-here',
    ]) {
      const res = await bridge.app.request(url);
      expect(res.status, url).toBe(404);
      const body = (await res.json()) as { error: { code: string; requestId: string; retryable: boolean } };
      expect(body.error.code).toBe('NOT_FOUND');
      expect(body.error.requestId).toBeTruthy();
      expect(body.error.retryable).toBe(false);
    }
    const unpublished = (await (await bridge.app.request('/v1/helpers/nope/manifest')).json()) as {
      error: { message: string };
    };
    expect(unpublished.error.message).toContain('publish one with devicebridge release publish');
  });

  it('400 for a non-JSON validate body', async () => {
    const res = await bridge.app.request('/v1/manifests/validate', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_ARGUMENT');
  });
});

describe('helpers and artifacts: security', () => {
  let bridge: TestBridge;
  beforeEach(async () => {
    bridge = await testBridge({ auth: testTokens() });
  });
  afterEach(async () => bridge.cleanup());

  it('unauthenticated publish is 401, client publish is 403, admin publish is 201', async () => {
    const anon = await upload(bridge, V1, '0.1.0');
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
    const client = await upload(bridge, V1, '0.1.0', { token: CLIENT_TOKEN });
    expect(client.status).toBe(403);
    expect(((await client.json()) as { error: { code: string } }).error.code).toBe('PERMISSION_DENIED');
    const wrong = await upload(bridge, V1, '0.1.0', { token: 'not-a-token' });
    expect(wrong.status).toBe(401);
    expect((await upload(bridge, V1, '0.1.0', { token: ADMIN_TOKEN })).status).toBe(201);
  });

  it('manifests and artifacts stay readable without a token; metrics need an admin', async () => {
    expect((await upload(bridge, V1, '0.1.0', { token: ADMIN_TOKEN })).status).toBe(201);
    expect((await bridge.app.request('/v1/helpers/android-snapshot-helper/manifest')).status).toBe(200);
    expect((await bridge.app.request('/metrics')).status).toBe(401);
    expect(
      (await bridge.app.request('/metrics', { headers: { Authorization: `Bearer ${CLIENT_TOKEN}` } })).status,
    ).toBe(403);
    expect(
      (await bridge.app.request('/metrics', { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).status,
    ).toBe(200);
  });

  it('path traversal in {name}, {version} and {sha256} is 400', async () => {
    for (const url of [
      '/v1/helpers/..%2F..%2Fetc/manifest',
      '/v1/helpers/..%2Fhelpers/manifest',
      '/v1/helpers/android-snapshot-helper/versions/..%2F..%2Flatest/manifest',
      '/v1/helpers/android-snapshot-helper/versions/..%2F1.0.0/manifest',
      '/v1/artifacts/..%2F..%2Fhelpers%2Fx%2Flatest.json',
      `/v1/artifacts/${'a'.repeat(63)}%2F`,
      '/v1/helpers/UPPER/manifest',
    ]) {
      const res = await bridge.app.request(url);
      expect(res.status, url).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_ARGUMENT');
    }
    const publish = await bridge.app.request('/v1/helpers/..%2Fx/releases?version=0.1.0', {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${ADMIN_TOKEN}`,
        'Content-Type': 'application/vnd.android.package-archive',
      },
      body: await readFile(V1),
    });
    expect(publish.status).toBe(400);
  });

  it('never echoes the bearer token and accepts only safe request ids', async () => {
    const res = await bridge.app.request('/v1/helpers/nope/manifest', {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'X-Request-Id': 'bad id with spaces' },
    });
    const text = await res.text();
    expect(text).not.toContain(ADMIN_TOKEN);
    expect(res.headers.get('x-request-id')).not.toBe('bad id with spaces');
    const mine = await bridge.app.request('/healthz', { headers: { 'X-Request-Id': 'req-42.a_b' } });
    expect(mine.headers.get('x-request-id')).toBe('req-42.a_b');
  });
});

describe('logs', () => {
  it('carry the requestId and never a token, on success and on failure', async () => {
    const { Writable } = await import('node:stream');
    const { createLogger } = await import('../../src/observability/logger.ts');
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const bridge = await testBridge({ auth: testTokens() });
    try {
      Object.assign(bridge.services, { logger: createLogger('debug', sink) });
      const app = (await import('../../src/server/app.ts')).createApp(bridge.services);
      const ok = await upload({ ...bridge, app }, V1, '0.1.0', { token: ADMIN_TOKEN });
      expect(ok.status).toBe(201);
      const refused = await app.request('/metrics', { headers: { Authorization: `Bearer ${CLIENT_TOKEN}` } });
      expect(refused.status).toBe(403);
      const unknown = await app.request('/metrics', {
        headers: { Authorization: 'Bearer not-a-real-token-xyz' },
      });
      expect(unknown.status).toBe(401);
      await new Promise((r) => setImmediate(r));
      const text = lines.join('');
      expect(text).toContain(ok.headers.get('x-request-id')!);
      expect(text).toContain('"route":"/v1/helpers/:name/releases"');
      expect(text).toContain('release publish');
      for (const secret of [ADMIN_TOKEN, CLIENT_TOKEN, 'not-a-real-token-xyz'])
        expect(text).not.toContain(secret);
    } finally {
      await bridge.cleanup();
    }
  });
});
