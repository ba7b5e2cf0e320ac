import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { withDeadline } from '../../adb/deadline.ts';
import {
  EDGE_ERRORS,
  errorResponses,
  HealthSchema,
  MetricsSchema,
  ReadySchema,
  SECURED_ERRORS,
} from '../../api/index.ts';
import { responsiveTimeout } from '../../event-loop-turns.ts';
import type { AppEnv } from '../env.ts';
import { guard } from '../middleware/guard.ts';

/** How long one readiness check may take before it counts as failed. */
export const READINESS_TIMEOUT_MS = 1500;

/**
 * One check, bounded. A check still running from an earlier probe (past its bound: a wedged store)
 * is joined rather than started again, so load balancers probing every second do not pile up
 * requests, sockets or queued commands against the dependency that hangs.
 */
async function readinessOf(
  name: string,
  probe: () => Promise<unknown>,
  running: Map<string, Promise<unknown>>,
): Promise<string> {
  let check = running.get(name);
  if (check === undefined) {
    const started = probe();
    check = started;
    running.set(name, started);
    const done = () => {
      if (running.get(name) === started) running.delete(name);
    };
    started.then(done, done);
  }
  // Bounded by responsive time: a node whose event loop is busy with device output answers late,
  // but its dependencies are not reported down for the node's own lag (event-loop-turns.ts).
  const bound = responsiveTimeout(READINESS_TIMEOUT_MS);
  try {
    await withDeadline(check, { signal: bound.signal }, name);
    return 'ok';
  } catch (err) {
    if (bound.signal.aborted) return `${name}: no answer within ${READINESS_TIMEOUT_MS} ms`;
    return err instanceof Error ? err.message : String(err);
  } finally {
    bound.dispose();
  }
}

export function registerHealth(app: OpenAPIHono<AppEnv>): void {
  // The last readiness answered, so a change is logged once with the failing checks (the request
  // log shows only the status); undefined until the first probe.
  let lastReady: boolean | undefined;
  // Checks still running (by name), joined by the next probe.
  const running = new Map<string, Promise<unknown>>();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'getHealth',
      tags: ['health'],
      summary: 'Liveness: the process answers',
      security: [],
      responses: {
        200: { description: 'alive', content: { 'application/json': { schema: HealthSchema } } },
        ...errorResponses(EDGE_ERRORS),
      },
    }),
    (c) => c.json({ status: 'ok' as const }, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'getReadiness',
      tags: ['health'],
      summary: 'Readiness: not draining; the artifact store, the lease store and the adb server answer',
      security: [],
      responses: {
        200: { description: 'ready', content: { 'application/json': { schema: ReadySchema } } },
        ...errorResponses(EDGE_ERRORS),
        503: { description: 'not ready', content: { 'application/json': { schema: ReadySchema } } },
      },
    }),
    async (c) => {
      const services = c.get('services');
      const probes: Record<string, () => Promise<unknown>> = {
        artifactStore: () => services.store.stat('helpers/.readyz'),
        ...services.readiness,
      };
      // Every check at once, each bounded: a store that hangs makes the node not ready, not the probe slow.
      const results = await Promise.all(
        Object.entries(probes).map(
          async ([name, probe]) => [name, await readinessOf(name, probe, running)] as const,
        ),
      );
      const checks: Record<string, string> = Object.fromEntries(results);
      let ok = results.every(([, result]) => result === 'ok');
      if (services.draining) {
        ok = false;
        checks['node'] = 'draining';
      }
      if (ok !== lastReady) {
        lastReady = ok;
        if (ok) services.logger.info({ checks }, 'readiness: ready');
        else services.logger.warn({ checks }, 'readiness: not ready');
      }
      return ok
        ? c.json({ status: 'ready' as const, checks }, 200)
        : c.json({ status: 'not-ready' as const, checks }, 503);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'getMetrics',
      tags: ['health'],
      summary: 'Prometheus metrics (admin when tokens are configured)',
      security: [{ bearer: [] }],
      // Open on a loopback-only bridge; with tokens configured, admins only.
      middleware: guard({ access: 'admin-when-tokens' }),
      responses: {
        200: {
          description: 'metrics in the Prometheus text format',
          content: { 'text/plain': { schema: MetricsSchema } },
        },
        ...errorResponses(SECURED_ERRORS),
      },
    }),
    async (c) => {
      const registry = c.get('services').metrics.registry;
      return c.text(await registry.metrics(), 200, { 'Content-Type': registry.contentType });
    },
  );
}
