import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  BODY_ERRORS,
  DOCTOR_DEFAULT_SECONDS,
  DoctorBodySchema,
  DoctorReportSchema,
  errorResponses,
  GLASS_ERRORS,
  LEASE_ERRORS,
  LeaseIdParam,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { PROXIED_HEADER } from '../../middleware/owner-proxy.ts';
import { SMALL_BODY_BYTES, scopeFor } from './common.ts';

/**
 * The lease's holder (a `client` token of the lease's tenant, or an admin) runs the doctor: it does
 * what the helper and glass routes do (installs the helpers, types into the device, enables the
 * a11y service) and nothing beyond them (no shell capability: its device commands are fixed), so it
 * needs what they need and no capability. Rate-limited like a snapshot; forwarded to the owner node.
 */
export const doctorRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/doctor',
  operationId: 'runDoctor',
  tags: ['doctor'],
  summary: 'Check every capability of the leased device and report (the device is left as it was found)',
  description:
    "Checks in order: helpers installed (test-package installs allowed), the self-test screen, viewport, snapshot one-shot and session, a gesture, the glass agent, a clipboard round trip, key injection, the a11y service, its tree, Unicode text, set_text, and the device put back. A failed check is 200 with `ok: false`; a known failure carries a `fix`. The run's bound is `timeoutSeconds`; a call forwarded from another node is bounded by the forward timeout less 5 s.",
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', body: jsonBody(SMALL_BODY_BYTES), forward: true, expensive: true }),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: DoctorBodySchema } }, required: false },
  },
  responses: {
    200: {
      description: 'the report: every check passed, failed (with a fix when known) or skipped',
      content: { 'application/json': { schema: DoctorReportSchema } },
    },
    ...errorResponses(SECURED_ERRORS, BODY_ERRORS, LEASE_ERRORS, GLASS_ERRORS),
  },
});

export function registerDoctor(app: OpenAPIHono<AppEnv>): void {
  app.openapi(doctorRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const body = c.req.valid('json') ?? {};
    let timeoutSeconds = body.timeoutSeconds ?? DOCTOR_DEFAULT_SECONDS;
    // A call forwarded by another node must answer within the forward timeout: the bound stays under it.
    if (c.req.header(PROXIED_HEADER) !== undefined) {
      const cap = Math.max(10, Math.floor(c.get('services').config.forwardTimeoutMs / 1000) - 5);
      timeoutSeconds = Math.min(timeoutSeconds, cap);
    }
    return c.json(await side.doctor.run(scope, { timeoutSeconds }), 200);
  });
}
