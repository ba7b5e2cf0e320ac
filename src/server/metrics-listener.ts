/**
 * The metrics listener: `GET /metrics` (Prometheus text format) without authentication, on its own
 * address (`DEVICEBRIDGE_METRICS_HOST`:`DEVICEBRIDGE_METRICS_PORT`), so a scraper needs no token of
 * the API (whose `/metrics` stays admin-only when tokens are configured). Nothing else is served
 * there: every other path or method is a 404.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BridgeError } from '../errors.ts';
import type { Metrics } from '../observability/metrics.ts';

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

export async function listenMetrics(metrics: Metrics, host: string, port: number): Promise<MetricsListener> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(text),
      () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics failed\n'),
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new BridgeError(
          'UNAVAILABLE',
          `cannot listen for metrics on ${host}:${port} (DEVICEBRIDGE_METRICS_PORT): ${err.code ?? err.message}`,
          {
            details: { setting: 'DEVICEBRIDGE_METRICS_PORT' },
          },
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const shown = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${shown}:${bound.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
