/**
 * Drain on SIGTERM through a real `serve` process while keep-alive clients keep sending: new
 * connections stop at once, every keep-alive connection closes after its current answer
 * (`Connection: close`), a lease wait ends with a typed retryable 503, `/readyz` says draining,
 * the bridge's adb server is stopped and the process exits 0 well within the grace period. Before
 * this, 1,131 requests were served after SIGTERM and the 10 s force-exit fired with exit 1.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TcpAdbServerConnector } from '../../src/adb/connector.ts';
import { pingAdbServer } from '../../src/adb/server.ts';
import { tempDir } from '../support/bridge.ts';
import { waitForExit } from '../support/cli.ts';
import { httpJson, type ServeNode, startServeNode } from '../support/fleet.ts';

const CLIENTS = 8;
const GRACE_MS = 4000;

interface Answer {
  path: string;
  status: number;
  connection: string | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: the test reads the fields it checks
  body: any;
  at: number;
}

function get(agent: http.Agent, url: URL, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: url.hostname, port: url.port, path, agent, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () =>
        resolve({
          path,
          status: res.statusCode ?? 0,
          connection: res.headers.connection,
          body: text.startsWith('{') ? JSON.parse(text) : text,
          at: performance.now(),
        }),
      );
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

describe('serve drains on SIGTERM (e2e)', () => {
  let tmp: { dir: string; cleanup(): Promise<void> };
  let node: ServeNode;

  beforeAll(async () => {
    tmp = await tempDir();
    node = await startServeNode({
      dataDir: tmp.dir,
      name: 'drainer',
      simulate: 1,
      env: { DEVICEBRIDGE_DRAIN_GRACE_MS: String(GRACE_MS) },
    });
  }, 60_000);

  afterAll(async () => {
    if (node && node.child.exitCode === null) node.child.kill('SIGKILL');
    await tmp?.cleanup();
  });

  it('refuses new work, closes keep-alive connections after their answer, stops adb and exits 0', async () => {
    const url = new URL(node.url);
    const ready = await httpJson(node.url, 'GET', '/readyz');
    expect(ready.status, JSON.stringify(ready.json)).toBe(200);
    expect(ready.json.checks).toEqual({ artifactStore: 'ok', adbServer: 'ok', leaseStore: 'ok' });
    expect((await httpJson(node.url, 'POST', '/v1/leases', { ttlSeconds: 60 })).status).toBe(201);
    // The only device is held: this waits, in flight when SIGTERM arrives.
    const waiter = httpJson(node.url, 'POST', '/v1/leases', { ttlSeconds: 60, waitSeconds: 30 });

    const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
    const answers: Answer[] = [];
    const errors: string[] = [];
    let stop = false;
    const client = async (i: number) => {
      while (!stop) {
        try {
          answers.push(await get(agent, url, i % 2 === 0 ? '/readyz' : '/v1/devices'));
        } catch (err) {
          // After the drain: connection refused (the listener is closed) ends this client.
          errors.push((err as NodeJS.ErrnoException).code ?? (err as Error).message);
          return;
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, i) => client(i));
    // Hammer until every connection is busy (bounded: a loaded machine answers slowly).
    const warm = Date.now() + 10_000;
    while (answers.length < CLIENTS * 4 && Date.now() < warm) await new Promise((r) => setTimeout(r, 50));
    const before = answers.length;
    expect(before).toBeGreaterThan(CLIENTS);
    expect(answers.every((a) => a.connection !== 'close')).toBe(true);

    const signalled = performance.now();
    node.child.kill('SIGTERM');
    const code = await waitForExit(node.child, GRACE_MS + 20_000);
    const exitedAfter = performance.now() - signalled;
    stop = true;
    await Promise.all(clients);
    agent.destroy();

    expect(code).toBe(0);
    expect(exitedAfter).toBeLessThan(GRACE_MS);
    const late = answers.slice(before).filter((a) => a.at > signalled);
    process.stderr.write(
      `serve-drain: ${before} answers before SIGTERM, ${late.length} after; exit ${code} after ${Math.round(exitedAfter)} ms; client errors ${[...new Set(errors)].join(',')}\n`,
    );
    // Each keep-alive connection gets at most its current answer (plus one already on the wire).
    expect(late.length).toBeLessThanOrEqual(CLIENTS * 2);
    for (const a of late.filter((x) => x.connection === 'close' && x.path === '/readyz')) {
      expect(a.status).toBe(503);
      expect(a.body.checks.node).toBe('draining');
    }
    // The wait ended with a typed, retryable 503 (retry on another node).
    const waited = await waiter;
    expect(waited.status, JSON.stringify(waited.json)).toBe(503);
    expect(waited.json.error).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    // The bridge's own adb server is gone with it.
    const adb = new TcpAdbServerConnector({ port: node.adbPort });
    await expect(pingAdbServer(adb, 1000)).rejects.toThrow();
  }, 60_000);
});
