import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import {
  EDGE_ERRORS,
  errorResponses,
  HealthSchema,
  MetricsSchema,
  ReadySchema,
  SECURED_ERRORS,
} from '../../api/index.ts';
import type { AppEnv } from '../env.ts';
import { guard } from '../middleware/guard.ts';

export function registerHealth(app: OpenAPIHono<AppEnv>): void {
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
      summary: 'Readiness: the artifact store answers',
      security: [],
      responses: {
        200: { description: 'ready', content: { 'application/json': { schema: ReadySchema } } },
        ...errorResponses(EDGE_ERRORS),
        503: { description: 'not ready', content: { 'application/json': { schema: ReadySchema } } },
      },
    }),
    async (c) => {
      const checks: Record<string, string> = {};
      let ok = true;
      try {
        await c.var.services.store.stat('helpers/.readyz');
        checks['artifactStore'] = 'ok';
      } catch (err) {
        ok = false;
        checks['artifactStore'] = (err as Error).message;
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
      const registry = c.var.services.metrics.registry;
      return c.text(await registry.metrics(), 200, { 'Content-Type': registry.contentType });
    },
  );
}
