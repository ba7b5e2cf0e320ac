import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { BridgeError } from '../../errors.ts';
import type { LeaseRef } from '../../helpers/lease-operations.ts';
import { type GestureSpec, planForGesture } from '../../helpers/protocol/gestures.ts';
import { MAX_DEADLINE_MS } from '../../helpers/snapshot/driver.ts';
import type { Lease } from '../../leases/types.ts';
import { normalizeSnapshot } from '../../snapshot/normalize.ts';
import type { AppEnv } from '../env.ts';
import { assertRole } from '../middleware/auth.ts';
import { guard, jsonBody } from '../middleware/guard.ts';
import { errorResponses, HelperNameParam } from '../schemas.ts';
import { requireDevices } from './devices.ts';

/** Body limits of the lease routes (gestures carry touch plans; the rest a few fields). */
const SMALL_BODY_BYTES = 16 * 1024;
const GESTURE_BODY_BYTES = 256 * 1024;

const LeaseIdParam = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a lease id')
  .openapi({ param: { name: 'id', in: 'path' }, example: 'lease_3kT9x0aQ2mZp8LwV1cYb' });

const Selector = z
  .object({
    deviceId: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    sdkMin: z.number().int().optional(),
    sdkMax: z.number().int().optional(),
  })
  .strict()
  .openapi('LeaseSelector');

const LeaseSchema = z
  .object({
    id: z.string(),
    deviceId: z.string(),
    tenant: z.string(),
    holder: z.string(),
    fencingToken: z.number().int(),
    acquiredAt: z.number(),
    expiresAt: z.number(),
    ttlSeconds: z.number().int(),
    selector: Selector,
    state: z.enum(['active', 'released', 'expired']),
    endedAt: z.number().optional(),
  })
  .openapi('Lease');

const AcquireBody = z
  .object({
    selector: Selector.default({}),
    ttlSeconds: z.number().int().optional().openapi({ description: 'default 300, max 3600' }),
    waitSeconds: z
      .number()
      .int()
      .optional()
      .openapi({ description: 'wait in a FIFO queue per selector (default 0)' }),
  })
  .strict()
  .openapi('AcquireLease');

const CaptureFields = {
  waitForIdleTimeoutMs: z.number().int().optional(),
  waitForIdleQuietMs: z.number().int().optional(),
  timeoutMs: z.number().int().optional(),
  maxDepth: z.number().int().optional(),
  maxNodes: z.number().int().optional(),
};
const AttemptSchema = z
  .object({ transport: z.enum(['session', 'one-shot']), outcome: z.string(), ms: z.number() })
  .openapi('Attempt');
const DeadlineField = z
  .number()
  .int()
  .min(1)
  .max(MAX_DEADLINE_MS)
  .optional()
  .openapi({ description: 'the whole request, fallback included (default timeoutMs + 10000)' });
const TransportField = z.enum(['auto', 'session', 'one-shot']).default('auto');

const SnapshotBody = z
  .object({
    format: z.enum(['json', 'xml']).default('json'),
    transport: TransportField,
    deadlineMs: DeadlineField,
    ...CaptureFields,
  })
  .strict()
  .openapi('SnapshotRequest');

const Point = z.object({ x: z.number(), y: z.number() });
const GestureBody = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('tap'), x: z.number(), y: z.number() }).strict(),
    z
      .object({
        kind: z.literal('long-press'),
        x: z.number(),
        y: z.number(),
        durationMs: z.number().int().optional(),
      })
      .strict(),
    z
      .object({ kind: z.literal('swipe'), from: Point, to: Point, durationMs: z.number().int().optional() })
      .strict(),
    z
      .object({ kind: z.literal('drag'), from: Point, to: Point, durationMs: z.number().int().optional() })
      .strict(),
    z
      .object({
        kind: z.literal('pinch'),
        center: Point,
        startDistance: z.number(),
        endDistance: z.number(),
        durationMs: z.number().int().optional(),
      })
      .strict(),
    z
      .object({
        kind: z.literal('rotate'),
        center: Point,
        radius: z.number(),
        startAngle: z.number(),
        endAngle: z.number(),
        durationMs: z.number().int().optional(),
      })
      .strict(),
    z.object({ kind: z.literal('plan'), plan: z.unknown() }).strict(),
  ])
  .and(z.object({ transport: TransportField.optional(), deadlineMs: DeadlineField }))
  .openapi('GestureRequest');

function view(lease: Lease) {
  return { ...lease, selector: lease.selector as z.infer<typeof Selector> };
}

/** The caller's lease: other tenants get 404 (not 403); ended leases 410. */
async function leaseFor(c: Context<AppEnv>, id: string, options: { active?: boolean } = {}): Promise<Lease> {
  const principal = assertRole(c.get('principal'), 'client');
  const manager = c.var.services.leases;
  requireDevices(c.var.services);
  const lease = await manager!.get(id);
  if (lease === null || (principal.role !== 'admin' && lease.tenant !== principal.tenant)) {
    throw new BridgeError('NOT_FOUND', `no lease ${id}`);
  }
  if ((options.active ?? true) && lease.state !== 'active') {
    throw new BridgeError('LEASE_EXPIRED', `lease ${id} is ${lease.state}`, {
      details: { state: lease.state },
    });
  }
  const token = c.req.header('x-fencing-token');
  if (token !== undefined && token !== String(lease.fencingToken)) {
    throw new BridgeError('LEASE_EXPIRED', `fencing token ${token} is stale (the device was leased again)`, {
      details: { fencingToken: token },
    });
  }
  c.set('logger', c.var.logger.child({ leaseId: lease.id, deviceId: lease.deviceId }));
  return lease;
}

function ref(lease: Lease): LeaseRef {
  return { id: lease.id, deviceId: lease.deviceId, fencingToken: lease.fencingToken };
}

const leaseResponses = (code: number, description: string) => ({
  [code]: { description, content: { 'application/json': { schema: LeaseSchema } } },
});

export function registerLeases(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/leases',
      summary: 'Lease one device matching the selector, waiting up to waitSeconds in a FIFO queue',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'client', body: jsonBody(SMALL_BODY_BYTES) }),
      request: { body: { content: { 'application/json': { schema: AcquireBody } }, required: true } },
      responses: {
        ...leaseResponses(201, 'leased'),
        ...errorResponses(400, 401, 403, 404, 409, 413, 415, 503),
      },
    }),
    async (c) => {
      const principal = assertRole(c.get('principal'), 'client');
      requireDevices(c.var.services);
      const body = c.req.valid('json');
      const lease = await c.var.services.leases!.acquire({
        // The raw selector: the route schema documents it, the manager validates it (zod's record
        // output would drop a `__proto__` label key).
        selector: ((await c.req.json()) as { selector?: unknown }).selector ?? {},
        ...(body.ttlSeconds === undefined ? {} : { ttlSeconds: body.ttlSeconds }),
        ...(body.waitSeconds === undefined ? {} : { waitSeconds: body.waitSeconds }),
        tenant: principal.tenant,
        holder: principal.name,
        signal: c.req.raw.signal,
      });
      c.var.logger.info({ leaseId: lease.id, deviceId: lease.deviceId }, 'lease acquired');
      return c.json(view(lease), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/leases',
      summary: "Active leases of the caller's tenant (admins: all)",
      security: [{ bearer: [] }],
      middleware: guard({ access: 'client' }),
      responses: {
        200: {
          description: 'leases',
          content: { 'application/json': { schema: z.object({ leases: z.array(LeaseSchema) }) } },
        },
        ...errorResponses(401, 403, 503),
      },
    }),
    async (c) => {
      const principal = assertRole(c.get('principal'), 'client');
      requireDevices(c.var.services);
      const leases = await c.var.services.leases!.list(
        principal.role === 'admin' ? {} : { tenant: principal.tenant },
      );
      return c.json({ leases: leases.map(view) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/leases/{id}',
      summary: 'One lease (404 for other tenants)',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'client' }),
      request: { params: z.object({ id: LeaseIdParam }) },
      responses: { ...leaseResponses(200, 'the lease'), ...errorResponses(400, 401, 403, 404, 503) },
    }),
    async (c) => c.json(view(await leaseFor(c, c.req.valid('param').id, { active: false })), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/leases/{id}/renew',
      summary: 'Extend the lease to now + ttlSeconds',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'client', body: jsonBody(SMALL_BODY_BYTES) }),
      request: {
        params: z.object({ id: LeaseIdParam }),
        body: {
          content: {
            'application/json': { schema: z.object({ ttlSeconds: z.number().int().optional() }).strict() },
          },
          required: false,
        },
      },
      responses: {
        ...leaseResponses(200, 'renewed'),
        ...errorResponses(400, 401, 403, 404, 409, 410, 413, 415, 503),
      },
    }),
    async (c) => {
      const lease = await leaseFor(c, c.req.valid('param').id);
      const body = (await c.req.json().catch(() => ({}))) as { ttlSeconds?: number };
      const renewed = await c.var.services.leases!.renew(
        lease.id,
        lease.fencingToken,
        body.ttlSeconds ?? lease.ttlSeconds,
      );
      return c.json(view(renewed), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/leases/{id}',
      summary: 'Release the lease: tear down helper sessions, forwards and changed settings',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'client' }),
      request: { params: z.object({ id: LeaseIdParam }) },
      responses: {
        200: {
          description: 'released, with the teardown record',
          content: {
            'application/json': {
              schema: z.object({ lease: LeaseSchema, teardown: z.record(z.string(), z.unknown()) }),
            },
          },
        },
        ...errorResponses(400, 401, 403, 404, 410, 503),
      },
    }),
    async (c) => {
      const lease = await leaseFor(c, c.req.valid('param').id);
      const result = await c.var.services.leases!.release(lease.id, lease.fencingToken);
      c.var.logger.info({ failures: result.teardown.failures.length }, 'lease released');
      return c.json(
        { lease: view(result.lease), teardown: result.teardown as unknown as Record<string, unknown> },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/leases/{id}/helpers/{name}/ensure',
      summary: 'Install the helper if missing, outdated or mismatched',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'client', body: jsonBody(SMALL_BODY_BYTES), forward: true }),
      request: {
        params: z.object({ id: LeaseIdParam, name: HelperNameParam }),
        body: {
          content: {
            'application/json': {
              schema: z
                .object({ policy: z.enum(['missing-or-outdated', 'always', 'never']).optional() })
                .strict(),
            },
          },
          required: false,
        },
      },
      responses: {
        200: {
          description: 'what ensure found and did',
          content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
        },
        ...errorResponses(400, 401, 403, 404, 410, 413, 415, 502, 503, 504),
      },
    }),
    async (c) => {
      const { id, name } = c.req.valid('param');
      const lease = await leaseFor(c, id);
      const body = (await c.req.json().catch(() => ({}))) as {
        policy?: 'missing-or-outdated' | 'always' | 'never';
      };
      const result = await c.var.services.operations!.ensure(ref(lease), name, body.policy);
      c.var.services.metrics.helperInstalls.inc({
        outcome: result.action === 'none' ? result.before : result.action,
      });
      return c.json(result as unknown as Record<string, unknown>, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/leases/{id}/snapshot',
      summary:
        'Capture a UI snapshot (normalized JSON or raw uiautomator XML) through the session or one-shot',
      security: [{ bearer: [] }],
      middleware: guard({
        access: 'client',
        body: jsonBody(SMALL_BODY_BYTES),
        forward: true,
        expensive: true,
      }),
      request: {
        params: z.object({ id: LeaseIdParam }),
        body: { content: { 'application/json': { schema: SnapshotBody } }, required: false },
      },
      responses: {
        200: {
          description: 'the snapshot',
          content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
        },
        ...errorResponses(400, 401, 403, 404, 410, 413, 415, 502, 503, 504),
      },
    }),
    async (c) => {
      const lease = await leaseFor(c, c.req.valid('param').id);
      const raw = await c.req.json().catch(() => ({}));
      const parsed = SnapshotBody.safeParse(raw);
      if (!parsed.success) {
        throw new BridgeError(
          'INVALID_ARGUMENT',
          `invalid snapshot request: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`,
        );
      }
      const { format, transport, deadlineMs, ...capture } = parsed.data;
      const s = await c.var.services.operations!.snapshot(ref(lease), {
        transport,
        capture,
        ...(deadlineMs === undefined ? {} : { deadlineMs }),
      });
      c.var.services.metrics.snapshotSeconds.observe({ transport: s.transport }, s.elapsedMs / 1000);
      const common = {
        transport: s.transport,
        ...(s.fallback ? { fallback: s.fallback } : {}),
        elapsedMs: s.elapsedMs,
        deadlineMs: s.deadlineMs,
        attempts: s.attempts,
        helperElapsedMs: s.result.elapsedMs ?? null,
        waitForIdleTimeoutMs: s.result.waitForIdleTimeoutMs ?? capture.waitForIdleTimeoutMs ?? null,
        nodeCount: s.result.nodeCount ?? null,
        truncated: s.result.truncated ?? null,
        windowCount: s.result.windowCount ?? null,
        captureMode: s.result.captureMode ?? null,
      };
      if (format === 'xml') return c.json({ ...common, format: 'xml', xml: s.xml }, 200);
      return c.json({ ...common, format: 'json', snapshot: normalizeSnapshot(s.xml) } as never, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/leases/{id}/viewport',
      summary: 'The interactive-window viewport',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'client', forward: true }),
      request: {
        params: z.object({ id: LeaseIdParam }),
        query: z.object({
          transport: TransportField.optional(),
          deadlineMs: z.coerce.number().int().min(1).max(MAX_DEADLINE_MS).optional(),
        }),
      },
      responses: {
        200: {
          description: 'viewport',
          content: {
            'application/json': {
              schema: z.object({
                transport: z.string(),
                x: z.number(),
                y: z.number(),
                width: z.number(),
                height: z.number(),
                elapsedMs: z.number(),
                deadlineMs: z.number(),
                attempts: z.array(AttemptSchema),
              }),
            },
          },
        },
        ...errorResponses(400, 401, 403, 404, 410, 413, 415, 502, 503, 504),
      },
    }),
    async (c) => {
      const lease = await leaseFor(c, c.req.valid('param').id);
      const query = c.req.valid('query');
      const v = await c.var.services.operations!.viewport(ref(lease), {
        transport: query.transport ?? 'auto',
        ...(query.deadlineMs === undefined ? {} : { deadlineMs: query.deadlineMs }),
      });
      return c.json(
        {
          transport: v.transport,
          ...v.viewport,
          elapsedMs: v.elapsedMs,
          deadlineMs: v.deadlineMs,
          attempts: v.attempts,
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/leases/{id}/gestures',
      summary:
        'Inject a gesture: tap, long-press, swipe, drag, pinch, rotate, or a raw android-touch-plan-v1 plan',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'client', body: jsonBody(GESTURE_BODY_BYTES), forward: true }),
      request: {
        params: z.object({ id: LeaseIdParam }),
        body: { content: { 'application/json': { schema: GestureBody } }, required: true },
      },
      responses: {
        200: {
          description: 'injected',
          content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
        },
        ...errorResponses(400, 401, 403, 404, 410, 413, 415, 502, 503, 504),
      },
    }),
    async (c) => {
      const lease = await leaseFor(c, c.req.valid('param').id);
      const body = c.req.valid('json');
      const { transport, deadlineMs, ...spec } = body;
      const plan = planForGesture(spec as GestureSpec);
      const g = await c.var.services.operations!.gesture(ref(lease), plan, {
        transport: transport ?? 'auto',
        ...(deadlineMs === undefined ? {} : { deadlineMs }),
      });
      const { elapsedMs: helperElapsedMs, ...result } = g.result;
      return c.json(
        {
          ...result,
          transport: g.transport,
          elapsedMs: g.elapsedMs,
          deadlineMs: g.deadlineMs,
          attempts: g.attempts,
          helperElapsedMs: helperElapsedMs ?? null,
        } as Record<string, unknown>,
        200,
      );
    },
  );
}
