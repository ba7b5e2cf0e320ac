import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../env.ts';
import { guard } from '../middleware/guard.ts';
import { errorResponses } from '../schemas.ts';

const Health = z.object({ status: z.literal('ok') }).openapi('Health');
const Ready = z
  .object({ status: z.enum(['ready', 'not-ready']), checks: z.record(z.string(), z.string()) })
  .openapi('Ready');

export function registerHealth(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/healthz',
      summary: 'Liveness: the process answers',
      responses: { 200: { description: 'alive', content: { 'application/json': { schema: Health } } } },
    }),
    (c) => c.json({ status: 'ok' as const }, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/readyz',
      summary: 'Readiness: the artifact store answers',
      responses: {
        200: { description: 'ready', content: { 'application/json': { schema: Ready } } },
        503: { description: 'not ready', content: { 'application/json': { schema: Ready } } },
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
      summary: 'Prometheus metrics (admin when tokens are configured)',
      security: [{ bearer: [] }],
      // Open on a loopback-only bridge; with tokens configured, admins only.
      middleware: guard({ access: 'admin-when-tokens' }),
      responses: {
        200: {
          description: 'metrics in the Prometheus text format',
          content: { 'text/plain': { schema: z.string() } },
        },
        ...errorResponses(401, 403),
      },
    }),
    async (c) => {
      const registry = c.var.services.metrics.registry;
      return c.text(await registry.metrics(), 200, { 'Content-Type': registry.contentType });
    },
  );
}
