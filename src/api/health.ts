/** Contract of the liveness, readiness and metrics routes. */
import { z } from '@hono/zod-openapi';

export const HealthSchema = z.object({ status: z.literal('ok') }).openapi('Health');
export const ReadySchema = z
  .object({ status: z.enum(['ready', 'not-ready']), checks: z.record(z.string(), z.string()) })
  .openapi('Ready');
/** The Prometheus text exposition format. */
export const MetricsSchema = z.string().openapi({ description: 'Prometheus text format 0.0.4' });

export type Health = z.infer<typeof HealthSchema>;
export type Ready = z.infer<typeof ReadySchema>;
