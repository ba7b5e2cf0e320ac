import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** One registry per service instance (tests build many), never prom-client's global one. */
export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  publishes: Counter<'outcome'>;
}

export function createMetrics(options: { defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaults) collectDefaultMetrics({ register: registry, prefix: 'devicebridge_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'devicebridge_http_requests_total',
      help: 'HTTP requests by method, route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'devicebridge_http_request_duration_seconds',
      help: 'HTTP request duration by method and route',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
      registers: [registry],
    }),
    publishes: new Counter({
      name: 'devicebridge_release_publishes_total',
      help: 'Helper release publishes by outcome (published, unchanged, refused)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}
