/**
 * The unauthenticated metrics listener (DEVICEBRIDGE_METRICS_PORT): a scraper reads `/metrics`
 * there without a token while the API's `/metrics` stays admin-only; nothing else is served there.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type RunningNode, startNode } from '../../src/node/start.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { ADMIN_TOKEN, tempDir, writeTokensFile } from '../support/bridge.ts';

describe('metrics listener', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function node(env: Record<string, string>): Promise<RunningNode> {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const config = loadConfig(
      {
        DEVICEBRIDGE_DATA_DIR: tmp.dir,
        DEVICEBRIDGE_PORT: '0',
        DEVICEBRIDGE_DEVICES: 'false',
        DEVICEBRIDGE_TOKENS_FILE: await writeTokensFile(tmp.dir),
        LOG_LEVEL: 'silent',
        ...env,
      },
      {},
    );
    const running = await startNode(config, { overrides: { logger: silentLogger() } });
    cleanups.push(() => running.close());
    return running;
  }

  it('serves /metrics without a token on its own port; the API /metrics still wants an admin', async () => {
    const running = await node({ DEVICEBRIDGE_METRICS_PORT: '0' });
    expect(running.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    await fetch(`${running.url}/healthz`);
    const scraped = await fetch(running.metricsUrl!);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/text\/plain/);
    const text = await scraped.text();
    expect(text).toMatch(/devicebridge_http_requests_total\{method="GET",route="\/healthz",status="200"\} 1/);
    expect(text).toContain('devicebridge_lease_acquisitions_total');
    expect((await fetch(`${running.url}/metrics`)).status).toBe(401);
    const admin = await fetch(`${running.url}/metrics`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(admin.status).toBe(200);
    const base = running.metricsUrl!.replace(/\/metrics$/, '');
    for (const [method, path] of [
      ['GET', '/healthz'],
      ['GET', '/v1/leases'],
      ['POST', '/metrics'],
      ['GET', '/metrics/../v1/devices'],
    ] as const) {
      expect((await fetch(`${base}${path}`, { method })).status, `${method} ${path}`).toBe(404);
    }
  });

  it('is off unless configured; a taken port fails the start naming the setting', async () => {
    const off = await node({});
    expect(off.metricsUrl).toBeUndefined();
    const taken = new URL(off.url).port;
    await expect(node({ DEVICEBRIDGE_METRICS_PORT: taken })).rejects.toThrow(
      /DEVICEBRIDGE_METRICS_PORT\): EADDRINUSE/,
    );
  });
});
