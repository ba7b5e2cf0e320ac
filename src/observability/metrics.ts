import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** One registry per service instance (tests build many), never prom-client's global one. */
export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  publishes: Counter<'outcome'>;
  snapshotSeconds: Histogram<'transport'>;
  helperInstalls: Counter<'outcome'>;
  leasesActive: Gauge;
  leasesWaiting: Gauge;
  leaseAcquisitions: Counter<'outcome'>;
  leaseWaitSeconds: Histogram;
  leaseExpiries: Counter;
  leaseTeardowns: Counter<'outcome'>;
  leaseWaiterGrants: Counter<'after'>;
  devicesByState: Gauge<'state'>;
  adbServerRestarts: Counter;
  healthPasses: Counter;
  rateLimited: Counter<'limit'>;
  handlerRuns: Counter<'route' | 'caller'>;
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
    snapshotSeconds: new Histogram({
      name: 'devicebridge_snapshot_duration_seconds',
      help: 'Snapshot latency through the bridge by transport (session, one-shot)',
      labelNames: ['transport'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    helperInstalls: new Counter({
      name: 'devicebridge_helper_installs_total',
      help: 'Helper ensure outcomes (installed, updated, reinstalled, current, missing, outdated, mismatched)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    leasesActive: new Gauge({
      name: 'devicebridge_leases_active',
      help: 'Active leases',
      registers: [registry],
    }),
    leasesWaiting: new Gauge({
      name: 'devicebridge_leases_waiting',
      help: 'Lease requests waiting in a queue',
      registers: [registry],
    }),
    leaseAcquisitions: new Counter({
      name: 'devicebridge_lease_acquisitions_total',
      help: 'Lease requests by outcome (granted, conflict: nothing free in time, refused: draining or a store down)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    leaseWaitSeconds: new Histogram({
      name: 'devicebridge_lease_wait_seconds',
      help: 'Time from a lease request to its grant (0 when a device was free at once)',
      buckets: [0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers: [registry],
    }),
    leaseExpiries: new Counter({
      name: 'devicebridge_lease_expiries_total',
      help: 'Leases that ran out (claimed by this node, which tore them down)',
      registers: [registry],
    }),
    leaseTeardowns: new Counter({
      name: 'devicebridge_lease_teardowns_total',
      help: 'Lease teardowns run by this node by outcome (ok, failed: the device was quarantined)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    leaseWaiterGrants: new Counter({
      name: 'devicebridge_lease_waiter_grants_total',
      help: 'Queued requests granted, by what started the granting attempt (joined: the look right after joining the queue, wake-up: a release or teardown signalled, poll: the safety-net poll)',
      labelNames: ['after'],
      registers: [registry],
    }),
    devicesByState: new Gauge({
      name: 'devicebridge_devices',
      help: 'Devices by state',
      labelNames: ['state'],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'devicebridge_rate_limited_total',
      help: 'Requests refused with 429 by limit (auth-failures, expensive)',
      labelNames: ['limit'],
      registers: [registry],
    }),
    handlerRuns: new Counter({
      name: 'devicebridge_http_handler_runs_total',
      help: 'Route handlers entered, by route and caller (anonymous, client, admin)',
      labelNames: ['route', 'caller'],
      registers: [registry],
    }),
    adbServerRestarts: new Counter({
      name: 'devicebridge_adb_server_restarts_total',
      help: 'Restarts of the bridge-owned adb server',
      registers: [registry],
    }),
    healthPasses: new Counter({
      name: 'devicebridge_device_health_passes_total',
      help: 'Device health passes this node completed',
      registers: [registry],
    }),
  };
}
