/**
 * The HTTP edge on a real socket (issue #10): hostile bodies are refused without the server reading
 * them, slow bodies are cut off, connections are capped and failed authentications and expensive
 * calls are rate-limited — through `startNode` (the composition root), Node's real HTTP server, with tokens configured.
 */
import http from 'node:http';
import net from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type RunningNode as RunningServer, startNode } from '../../src/node/index.ts';
import { ADMIN_TOKEN, CLIENT_TOKEN, tempDir, writeTokensFile } from '../support/bridge.ts';
import { waitFor } from '../support/wait-for.ts';

const MB = 1024 * 1024;

interface Sent {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Bytes the client had handed to its socket when the answer arrived. */
  sentWhenAnswered: number;
}

/** POST `total` bytes (chunked unless `declare`), answering as soon as the response arrives. */
function sendLarge(
  url: string,
  path: string,
  headers: Record<string, string>,
  total: number,
  options: { declare?: boolean; prefix?: string } = {},
): Promise<Sent> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    const fill = Buffer.alloc(64 * 1024, 0x20);
    const source = new Readable({
      read() {
        if (sent === 0 && options.prefix) {
          sent += Buffer.byteLength(options.prefix);
          this.push(options.prefix);
          return;
        }
        if (sent >= total) return this.push(null);
        const n = Math.min(fill.length, total - sent);
        sent += n;
        this.push(fill.subarray(0, n));
      },
    });
    const req = http.request(`${url}${path}`, {
      method: 'POST',
      headers: { ...headers, ...(options.declare ? { 'Content-Length': String(total) } : {}) },
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const at = sent;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => {
        source.destroy();
        req.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, sentWhenAnswered: at });
      });
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    source.pipe(req);
  });
}

describe('HTTP edge on a real socket', () => {
  let server: RunningServer | undefined;
  let cleanup: (() => Promise<void>) | undefined;

  async function start(env: Record<string, string> = {}): Promise<RunningServer> {
    const tmp = await tempDir();
    cleanup = tmp.cleanup;
    const config = loadConfig(
      {
        DEVICEBRIDGE_DATA_DIR: tmp.dir,
        DEVICEBRIDGE_PORT: '0',
        DEVICEBRIDGE_TOKENS_FILE: await writeTokensFile(tmp.dir),
        DEVICEBRIDGE_DEVICES: 'false',
        LOG_LEVEL: 'silent',
        ...env,
      },
      {},
    );
    server = await startNode(config);
    return server;
  }

  afterEach(async () => {
    await server?.close();
    await cleanup?.();
    server = undefined;
    cleanup = undefined;
  });

  it('refuses at start a configuration whose served manifests would fail the bridge’s own validator', async () => {
    for (const [env, variable] of [
      [{ DEVICEBRIDGE_PUBLIC_URL: 'http://bridge.example.com' }, 'DEVICEBRIDGE_PUBLIC_URL'],
      [{ DEVICEBRIDGE_PUBLIC_URL: 'https://bridge.example.com/?x=1' }, 'DEVICEBRIDGE_PUBLIC_URL'],
      [{ DEVICEBRIDGE_HOST: '0.0.0.0' }, 'DEVICEBRIDGE_PUBLIC_URL'],
      [{ S3_BUCKET: 'bucket', S3_PUBLIC_BASE_URL: 'http://cdn.example.com/artifacts' }, 'S3_PUBLIC_BASE_URL'],
    ] as const) {
      await expect(start(env), JSON.stringify(env)).rejects.toThrow(variable);
      await cleanup?.();
    }
    // Loopback http and any https public URL are fine; so is a non-loopback bind with an https URL.
    const ok = await start({
      DEVICEBRIDGE_HOST: '0.0.0.0',
      DEVICEBRIDGE_PUBLIC_URL: 'https://bridge.example.com',
    });
    expect(ok.services.publicUrl).toBe('https://bridge.example.com');
    await ok.close();
    await cleanup?.();
    const local = await start({});
    expect(local.services.publicUrl).toBe(`http://127.0.0.1:${local.port}`);
  });

  it('a 50 MB body without a token gets 401 without the server reading it', async () => {
    const { url } = await start();
    for (const declare of [false, true]) {
      const res = await sendLarge(url, '/v1/devices', { 'Content-Type': 'application/json' }, 50 * MB, {
        declare,
      });
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body).error.code).toBe('UNAUTHENTICATED');
      // Only socket buffers' worth went out before the answer: the server never pulled the body.
      expect(res.sentWhenAnswered, `declare=${declare}`).toBeLessThan(16 * MB);
    }
  });

  it('a chunked JSON body over the route limit is 413 while it streams (the rest is never read)', async () => {
    const { url } = await start();
    const res = await sendLarge(
      url,
      '/v1/devices',
      { 'Content-Type': 'application/json', Authorization: `Bearer ${ADMIN_TOKEN}` },
      50 * MB,
      { prefix: '{"endpoint":"127.0.0.1:5555"' },
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(res.sentWhenAnswered).toBeLessThan(16 * MB);
  });

  it('a chunked multipart publish over DEVICEBRIDGE_MAX_UPLOAD_BYTES is 413 while it streams', async () => {
    const { url } = await start({ DEVICEBRIDGE_MAX_UPLOAD_BYTES: String(MB) });
    const boundary = 'b0undary';
    const res = await sendLarge(
      url,
      '/v1/helpers/android-snapshot-helper/releases',
      {
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        Authorization: `Bearer ${ADMIN_TOKEN}`,
      },
      50 * MB,
      {
        prefix:
          `--${boundary}\r\nContent-Disposition: form-data; name="version"\r\n\r\n0.1.0\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="apk"; filename="h.apk"\r\n` +
          'Content-Type: application/vnd.android.package-archive\r\n\r\n',
      },
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(res.sentWhenAnswered).toBeLessThan(16 * MB);
  });

  it('a slow body is cut off after DEVICEBRIDGE_REQUEST_TIMEOUT_MS, not Node’s 300 s', async () => {
    const { port } = await start({
      DEVICEBRIDGE_REQUEST_TIMEOUT_MS: '1000',
      DEVICEBRIDGE_HEADERS_TIMEOUT_MS: '1000',
    });
    const socket = net.connect(port, '127.0.0.1');
    socket.write(
      `POST /v1/manifests/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
    );
    const drip = setInterval(() => socket.write(' '), 200);
    let answer = '';
    socket.on('data', (d) => {
      answer += d.toString();
    });
    await new Promise<void>((resolve) => socket.on('close', () => resolve()));
    clearInterval(drip);
    // 408 is the request timeout's answer; Node's own 300 s would outlast the test's timeout.
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('connections above DEVICEBRIDGE_MAX_CONNECTIONS are refused; the held ones still work', async () => {
    const { port, url } = await start({ DEVICEBRIDGE_MAX_CONNECTIONS: '2' });
    const held = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<net.Socket>((resolve) => {
            const s = net.connect(port, '127.0.0.1', () => resolve(s));
          }),
      ),
    );
    // The server took both: each answers a request on it (and stays open: keep-alive).
    for (const s of held) {
      const answer = new Promise<string>((resolve) => s.once('data', (d: Buffer) => resolve(d.toString())));
      s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await answer).toMatch(/^HTTP\/1\.1 200/);
    }
    const third = net.connect(port, '127.0.0.1');
    const closed = await new Promise<boolean>((resolve) => {
      third.on('close', () => resolve(true));
      third.on('error', () => {});
      third.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(closed).toBe(true);
    for (const s of held) s.destroy();
    // Once the server saw them close, a new connection is taken again.
    await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200, {
      what: 'a new connection answered after the held ones closed',
    });
  });

  it('failed authentications are limited per address: 429 with Retry-After, counted in a metric', async () => {
    const { url } = await start({ DEVICEBRIDGE_RATE_AUTH_FAILURES: '3' });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${url}/v1/devices`, { headers: { Authorization: `Bearer guess-${i}` } });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
      }
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    // A token that validates is never refused by the limiter (the failures may come from anyone
    // sharing the address: a proxy, a NAT)...
    expect(
      (await fetch(`${url}/healthz`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).status,
    ).toBe(200);
    // ...and anonymous calls to public routes go on.
    expect((await fetch(`${url}/v1/helpers`)).status).toBe(200);
    const metrics = await server!.services.metrics.registry.getSingleMetricAsString(
      'devicebridge_rate_limited_total',
    );
    expect(metrics).toMatch(/devicebridge_rate_limited_total\{limit="auth-failures"\} 1/);
  });

  it('failed authentications are limited per presented credential too, across addresses', async () => {
    const { port } = await start({ DEVICEBRIDGE_RATE_AUTH_FAILURES: '3' });
    const from = (localAddress: string, token: string) =>
      new Promise<number>((resolve, reject) => {
        http
          .get(
            {
              host: '127.0.0.1',
              port,
              path: '/metrics',
              localAddress,
              headers: { Authorization: `Bearer ${token}` },
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          )
          .on('error', reject);
      });
    const statuses: number[] = [];
    for (const address of ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'])
      statuses.push(await from(address, 'revoked-token'));
    expect(statuses).toEqual([401, 401, 401, 429]);
    // Another address with another credential is not affected.
    expect(await from('127.0.0.6', ADMIN_TOKEN)).toBe(200);
  });

  it('expensive calls (publish) are limited per token and per address', async () => {
    const { url } = await start({ DEVICEBRIDGE_RATE_EXPENSIVE: '2' });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${url}/v1/helpers/x/releases?version=0.1.0`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/octet-stream' },
        body: 'not an apk',
      });
      statuses.push(res.status);
      if (res.status === 429) expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    expect(statuses).toEqual([400, 400, 429]);
    // A client token from the same address is 403 (authorization first), not a rate-limit answer.
    const denied = await fetch(`${url}/v1/helpers/x/releases?version=0.1.0`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${CLIENT_TOKEN}`, 'Content-Type': 'application/octet-stream' },
      body: 'x',
    });
    expect(denied.status).toBe(403);
  });
});
