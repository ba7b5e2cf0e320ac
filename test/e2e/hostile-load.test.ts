/**
 * Honest clients keep working while hostile requests arrive, on a real listening node (`startNode`,
 * port 0, real HTTP over loopback):
 * - a flood of failed authentications never refuses a token that validates, and behind a trusted
 *   proxy each client is keyed by its own address (X-Forwarded-For), never by the proxy's;
 * - without tokens, a browser page of another origin (Origin, Sec-Fetch-Site) and a DNS-rebound
 *   name (Host) are refused before anything runs, while the CLI (no Origin) and the console's own
 *   page (same origin) work; with tokens, the console's sign-in form checks Origin;
 * - a client that hangs up in the middle of its body is a client abort (499, info), not a 500.
 */
import http from 'node:http';
import net from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type RunningNode, startNode } from '../../src/node/index.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { ADMIN_TOKEN, tempDir, writeTokensFile } from '../support/bridge.ts';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request over a fresh connection, with any headers (Host included) and source address. */
function send(
  port: number,
  path: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    localAddress?: string;
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        agent: false,
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const codeOf = (answer: Answer): string | undefined =>
  answer.body.startsWith('{')
    ? (JSON.parse(answer.body) as { error?: { code: string } }).error?.code
    : undefined;

/** `count` calls of `call`, at most `width` at a time; the answers in order. */
async function inBatches<T>(count: number, width: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < count; start += width) {
    const batch = Array.from({ length: Math.min(width, count - start) }, (_, j) => call(start + j));
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

/** Write `request` on a raw connection; resolves everything the server sent once it closes it. */
function rawExchange(port: number, request: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (d: Buffer) => {
    answer += d.toString();
  });
  socket.write(request);
  return new Promise((resolve) => socket.on('close', () => resolve(answer)));
}

describe('hostile load on a real node', () => {
  let node: RunningNode | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  let lines: Array<Record<string, unknown>> = [];

  async function start(options: { tokens: boolean; env?: Record<string, string> }): Promise<RunningNode> {
    const tmp = await tempDir();
    cleanup = tmp.cleanup;
    const config = loadConfig(
      {
        DEVICEBRIDGE_DATA_DIR: tmp.dir,
        DEVICEBRIDGE_PORT: '0',
        DEVICEBRIDGE_DEVICES: 'false',
        LOG_LEVEL: 'info',
        ...(options.tokens ? { DEVICEBRIDGE_TOKENS_FILE: await writeTokensFile(tmp.dir) } : {}),
        ...options.env,
      },
      {},
    );
    lines = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line));
        done();
      },
    });
    node = await startNode(config, { overrides: { logger: createLogger('info', sink) } });
    return node;
  }

  afterEach(async () => {
    await node?.close();
    await cleanup?.();
    node = undefined;
    cleanup = undefined;
  });

  describe('failed authentications', () => {
    it('200 failed authentications from one address never refuse a valid admin token from it', async () => {
      const { port } = await start({ tokens: true });
      const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
      const answers = await inBatches(200, 10, async (i) => {
        const guess = await send(port, '/v1/whoami', { headers: { Authorization: `Bearer guess-${i}` } });
        const honest = i % 4 === 0 ? await send(port, '/v1/whoami', { headers: admin }) : undefined;
        return { guess: guess.status, honest: honest?.status };
      });
      const guesses = answers.map((a) => a.guess);
      // The guesses are refused, and past the limit (60 a minute) refused as rate-limited...
      expect(new Set(guesses)).toEqual(new Set([401, 429]));
      // ...while every honest call with the valid token, from the same address, is answered.
      const honest = answers.flatMap((a) => (a.honest === undefined ? [] : [a.honest]));
      expect(honest).toHaveLength(50);
      expect(new Set(honest)).toEqual(new Set([200]));
      expect((await send(port, '/v1/whoami', { headers: admin })).status).toBe(200);
    });

    it('behind a trusted proxy each client has its own allowance (X-Forwarded-For)', async () => {
      const { port } = await start({
        tokens: true,
        env: { DEVICEBRIDGE_TRUSTED_PROXIES: '127.0.0.1', DEVICEBRIDGE_RATE_AUTH_FAILURES: '3' },
      });
      const viaProxy = (client: string, token: string) =>
        send(port, '/v1/whoami', {
          headers: { Authorization: `Bearer ${token}`, 'X-Forwarded-For': client },
        }).then((a) => a.status);
      const attacker: number[] = [];
      for (let i = 0; i < 5; i++) attacker.push(await viaProxy('203.0.113.7', `guess-${i}`));
      expect(attacker).toEqual([401, 401, 401, 429, 429]);
      // Another client behind the same proxy still gets its own answer to a typo, then its token works.
      expect(await viaProxy('198.51.100.2', 'a-typo')).toBe(401);
      expect(await viaProxy('198.51.100.2', ADMIN_TOKEN)).toBe(200);
      // A spoofed X-Forwarded-For from the attacker's own side of the proxy does not reset its key:
      // the proxy appends the address it saw, and only that last hop is believed.
      expect(await viaProxy('198.51.100.99, 203.0.113.7', 'guess-again')).toBe(429);
    });

    it('a peer that is not a trusted proxy is keyed by its own address, whatever X-Forwarded-For says', async () => {
      const { port } = await start({
        tokens: true,
        env: { DEVICEBRIDGE_TRUSTED_PROXIES: '127.0.0.1', DEVICEBRIDGE_RATE_AUTH_FAILURES: '3' },
      });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const answer = await send(port, '/v1/whoami', {
          localAddress: '127.0.0.2',
          headers: { Authorization: `Bearer guess-${i}`, 'X-Forwarded-For': `192.0.2.${i}` },
        });
        statuses.push(answer.status);
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    });
  });

  describe('browsers, without tokens', () => {
    it('a page of another origin cannot publish, lease or read; the CLI and the same origin can', async () => {
      const { port } = await start({ tokens: false });
      const boundary = 'x-boundary';
      const multipart = [
        `--${boundary}\r\nContent-Disposition: form-data; name="version"\r\n\r\n1.0.0\r\n`,
        `--${boundary}\r\nContent-Disposition: form-data; name="apk"; filename="a.apk"\r\n`,
        'Content-Type: application/vnd.android.package-archive\r\n\r\nnot an apk\r\n',
        `--${boundary}--\r\n`,
      ].join('');
      // A `no-cors` multipart fetch from another site: the browser sends Origin and Sec-Fetch-Site.
      const publish = await send(port, '/v1/helpers/evil/releases', {
        method: 'POST',
        headers: {
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          Origin: 'https://attacker.example',
          'Sec-Fetch-Site': 'cross-site',
          'Sec-Fetch-Mode': 'no-cors',
        },
        body: multipart,
      });
      expect(publish.status).toBe(403);
      expect(codeOf(publish)).toBe('CROSS_SITE_REQUEST');
      expect(JSON.parse(publish.body).error.message).toMatch(/another origin/);
      // Older browsers send only Origin; some requests only Sec-Fetch-Site. Either is enough.
      const lease = { method: 'POST', body: '{}' };
      const browsers: Array<Record<string, string>> = [
        { Origin: 'http://attacker.example' },
        { Origin: 'null' },
        { Origin: `http://localhost:${port + 1}` },
        { 'Sec-Fetch-Site': 'cross-site' },
        { 'Sec-Fetch-Site': 'same-site' },
      ];
      for (const headers of browsers) {
        const answer = await send(port, '/v1/leases', {
          ...lease,
          headers: { 'Content-Type': 'application/json', ...headers },
        });
        expect(answer.status, JSON.stringify(headers)).toBe(403);
        expect(codeOf(answer)).toBe('CROSS_SITE_REQUEST');
      }
      const read = await send(port, '/v1/whoami', { headers: { 'Sec-Fetch-Site': 'cross-site' } });
      expect(read.status).toBe(403);
      // Nothing was published.
      expect((await send(port, '/v1/helpers/evil/releases')).status).toBe(404);

      // The CLI and the typed client send no Origin; the console's page is same-origin.
      expect((await send(port, '/v1/whoami')).status).toBe(200);
      const sameOrigin = await send(port, '/v1/manifests/validate', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Origin: `http://127.0.0.1:${port}`,
          'Sec-Fetch-Site': 'same-origin',
        },
        body: '{}',
      });
      expect(sameOrigin.status).toBe(200);
      const typed = await send(port, '/v1/whoami', { headers: { 'Sec-Fetch-Site': 'none' } });
      expect(typed.status).toBe(200);
      // A link from another site opens the console (a top-level page load reads nothing back).
      const link = await send(port, '/console/sign-in', {
        headers: {
          'Sec-Fetch-Site': 'cross-site',
          'Sec-Fetch-Mode': 'navigate',
          'Sec-Fetch-Dest': 'document',
        },
      });
      expect(link.status).toBe(200);
    });

    it('a name that is not loopback in Host (DNS rebinding) is 421; loopback names on any port are served', async () => {
      const { port } = await start({ tokens: false });
      for (const host of ['rebind.attacker.example', `rebind.attacker.example:${port}`, `10.0.0.1:${port}`]) {
        const devices = await send(port, '/v1/devices', { headers: { Host: host } });
        expect(devices.status, host).toBe(421);
        expect(codeOf(devices)).toBe('MISDIRECTED_REQUEST');
        const lease = await send(port, '/v1/leases', {
          method: 'POST',
          headers: { Host: host, 'Content-Type': 'application/json' },
          body: '{}',
        });
        expect(lease.status, host).toBe(421);
      }
      for (const host of [
        `127.0.0.1:${port}`,
        '127.0.0.1',
        `localhost:${port}`,
        'localhost:1',
        `127.1.2.3:${port}`,
        `[::1]:${port}`,
      ]) {
        expect((await send(port, '/v1/whoami', { headers: { Host: host } })).status, host).toBe(200);
      }
    });
  });

  describe('browsers, with tokens', () => {
    it('the sign-in form from another origin is refused (login CSRF); from the console itself it signs in', async () => {
      const { port } = await start({ tokens: true });
      const form = (headers: Record<string, string>) =>
        send(port, '/console/sign-in', {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
          body: `token=${encodeURIComponent(ADMIN_TOKEN)}`,
        });
      const forged = await form({ Origin: 'https://attacker.example', 'Sec-Fetch-Site': 'cross-site' });
      expect(forged.status).toBe(403);
      expect(codeOf(forged)).toBe('CROSS_SITE_REQUEST');
      expect(forged.headers['set-cookie']).toBeUndefined();
      const own = await form({ Origin: `http://127.0.0.1:${port}`, 'Sec-Fetch-Site': 'same-origin' });
      expect(own.status).toBe(303);
      expect(own.headers['set-cookie']).toBeDefined();
      // A bearer token is not ambient: API calls with one are not the browser's to forge, any Host.
      const api = await send(port, '/v1/whoami', {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, Host: 'bridge.example.com' },
      });
      expect(api.status).toBe(200);
    });
  });

  describe('client aborts', () => {
    it('a client that hangs up in the middle of its body is a 499 at info level, never a 500', async () => {
      const { port } = await start({ tokens: false });
      const socket = net.connect(port, '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      // `Expect: 100-continue`: the server's "100 Continue" says it took the request and handed it on.
      const continued = new Promise<string>((resolve) =>
        socket.once('data', (d: Buffer) => resolve(d.toString())),
      );
      socket.write(
        'POST /v1/manifests/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          'Content-Length: 100000\r\nExpect: 100-continue\r\n\r\n',
      );
      expect(await continued).toMatch(/^HTTP\/1\.1 100 /);
      socket.write('{"name": "half a bo');
      socket.destroy();
      await vi.waitFor(
        () => {
          expect(
            lines.find((l) => l['msg'] === 'request' && l['route'] === '/v1/manifests/validate'),
          ).toBeDefined();
        },
        { timeout: 10_000, interval: 20 },
      );
      const access = lines.find((l) => l['msg'] === 'request' && l['route'] === '/v1/manifests/validate')!;
      expect(access['status']).toBe(499);
      expect(access['level']).toBe(30);
      expect(lines.filter((l) => (l['level'] as number) >= 50)).toEqual([]);
      const metrics = await node!.services.metrics.registry.getSingleMetricAsString(
        'devicebridge_http_requests_total',
      );
      expect(metrics).toMatch(/route="\/v1\/manifests\/validate",status="499"\} 1/);
      expect(metrics).not.toMatch(/status="500"/);
      // The server goes on serving.
      expect((await send(port, '/v1/whoami')).status).toBe(200);
    });

    it('a body that does not arrive within the request timeout is the 408 Node sent, not a 500', async () => {
      const { port } = await start({
        tokens: false,
        env: { DEVICEBRIDGE_REQUEST_TIMEOUT_MS: '1000', DEVICEBRIDGE_HEADERS_TIMEOUT_MS: '500' },
      });
      // The server cuts the connection at its request timeout, answering 408 itself.
      const answer = await rawExchange(
        port,
        'POST /v1/manifests/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          'Content-Length: 100000\r\n\r\n{"name": ',
      );
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      const route = (l: Record<string, unknown>) =>
        l['msg'] === 'request' && l['route'] === '/v1/manifests/validate';
      await vi.waitFor(() => expect(lines.find(route)).toBeDefined(), { timeout: 10_000, interval: 20 });
      expect(lines.find(route)!['status']).toBe(408);
      expect(lines.filter((l) => (l['level'] as number) >= 50)).toEqual([]);
    });
  });

  describe('slow and numerous connections', () => {
    /** A connection from `localAddress` that sends the start of a request and then nothing. */
    async function slowConnection(port: number, localAddress: string): Promise<net.Socket> {
      const socket = net.connect({ port, host: '127.0.0.1', localAddress });
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => {
        socket.once('connect', () => resolve());
        socket.once('close', () => resolve());
      });
      if (!socket.destroyed) socket.write('POST /v1/manifests/validate HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      return socket;
    }
    const closed = (socket: net.Socket) =>
      socket.destroyed
        ? Promise.resolve()
        : new Promise<void>((resolve) => socket.once('close', () => resolve()));

    it('one address holding connections gets its share only: the rest are closed at accept, other clients are served', async () => {
      const { port } = await start({
        tokens: false,
        env: { DEVICEBRIDGE_MAX_CONNECTIONS: '300', DEVICEBRIDGE_MAX_CONNECTIONS_PER_ADDRESS: '100' },
      });
      // 400 slow connections from one address: more than the server's whole connection cap.
      const slow = await inBatches(400, 100, () => slowConnection(port, '127.0.0.2'));
      // Past its 100, each is closed as it is accepted (the server's close, not a timeout).
      const open = () => slow.filter((s) => !s.destroyed);
      for (let i = 0; open().length > 100; i++) {
        expect(i, 'connections past the per-address cap are closed').toBeLessThan(500);
        await Promise.race(open().map(closed));
      }
      const answers = await inBatches(20, 5, () => send(port, '/healthz'));
      expect(answers.map((a) => a.status)).toEqual(new Array(20).fill(200));
      // The 100 it holds are still open: only the surplus was cut.
      expect(open().length).toBe(100);
      for (const s of slow) s.destroy();
    });

    it('a JSON body that trickles in is answered 408 at its body deadline and its connection closed', async () => {
      const { port } = await start({ tokens: false });
      const answer = await rawExchange(
        port,
        'POST /v1/manifests/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          'Content-Length: 1000\r\n\r\n{',
      );
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toContain('"code":"REQUEST_TIMEOUT"');
      expect(answer).toContain('did not arrive within 10 s');
    }, 30_000);
  });
});
