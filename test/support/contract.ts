/**
 * Contract checks of real answers: an answer of a route must parse with the route's own response
 * schema (the one that feeds the OpenAPI document and types the client) and lose nothing in the
 * parse (an undocumented field fails), and an error answer must carry a code that the operation's
 * error response for that status names in `x-error-codes`.
 */
import { expect } from 'vitest';
import type { z } from 'zod';
import { a11yActionRoute } from '../../src/server/routes/leases/a11y-actions.ts';
import { a11yTreeRoute } from '../../src/server/routes/leases/a11y-tree.ts';
import { acquireLeaseRoute } from '../../src/server/routes/leases/acquire.ts';
import { adbEndpointRoute } from '../../src/server/routes/leases/adb-endpoint.ts';
import { appActionRoute, uninstallAppRoute } from '../../src/server/routes/leases/app-action.ts';
import { installAppRoute } from '../../src/server/routes/leases/apps-install.ts';
import { listAppsRoute } from '../../src/server/routes/leases/apps-list.ts';
import { getClipboardRoute } from '../../src/server/routes/leases/clipboard-get.ts';
import { setClipboardRoute } from '../../src/server/routes/leases/clipboard-set.ts';
import { doctorRoute } from '../../src/server/routes/leases/doctor.ts';
import { ensureHelperRoute } from '../../src/server/routes/leases/ensure.ts';
import { gestureRoute } from '../../src/server/routes/leases/gestures.ts';
import { getLeaseRoute } from '../../src/server/routes/leases/get.ts';
import { pressKeysRoute } from '../../src/server/routes/leases/keys.ts';
import { listLeasesRoute } from '../../src/server/routes/leases/list.ts';
import { pointerRoute } from '../../src/server/routes/leases/pointer.ts';
import { releaseLeaseRoute } from '../../src/server/routes/leases/release.ts';
import { renewLeaseRoute } from '../../src/server/routes/leases/renew.ts';
import { screenshotRoute } from '../../src/server/routes/leases/screenshot.ts';
import { shellRoute, shellStreamRoute } from '../../src/server/routes/leases/shell.ts';
import { snapshotRoute } from '../../src/server/routes/leases/snapshot.ts';
import { listTeardownsRoute } from '../../src/server/routes/leases/teardowns.ts';
import { typeTextRoute } from '../../src/server/routes/leases/text.ts';
import { viewportRoute } from '../../src/server/routes/leases/viewport.ts';
import { listWaitersRoute } from '../../src/server/routes/leases/waiters.ts';

interface RouteLike {
  method: string;
  path: string;
  operationId?: string;
  responses: Record<
    string | number,
    { content?: Record<string, { schema?: unknown }>; 'x-error-codes'?: string[] } | object
  >;
}

/** Every lease route (one file per route under src/server/routes/leases/). */
export const LEASE_ROUTES: RouteLike[] = [
  acquireLeaseRoute,
  listLeasesRoute,
  getLeaseRoute,
  renewLeaseRoute,
  releaseLeaseRoute,
  ensureHelperRoute,
  snapshotRoute,
  viewportRoute,
  gestureRoute,
  screenshotRoute,
  adbEndpointRoute,
  listTeardownsRoute,
  listWaitersRoute,
];

/** The doctor's route (checked by test/integration/doctor.test.ts). */
export const DOCTOR_ROUTES: RouteLike[] = [doctorRoute];

/** The lease-scoped glass companion routes (checked by test/integration/glass-lease.test.ts). */
export const GLASS_ROUTES: RouteLike[] = [
  getClipboardRoute,
  setClipboardRoute,
  typeTextRoute,
  pressKeysRoute,
  pointerRoute,
  a11yTreeRoute,
  a11yActionRoute,
];

function matcher(route: RouteLike): RegExp {
  const pattern = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${pattern}$`);
}

/** The farm routes of a lease, checked the same way; their suites check their coverage. */
export const FARM_ROUTES: RouteLike[] = [
  shellRoute,
  shellStreamRoute,
  installAppRoute,
  listAppsRoute,
  appActionRoute,
  uninstallAppRoute,
];

const compiled = [...LEASE_ROUTES, ...GLASS_ROUTES, ...FARM_ROUTES, ...DOCTOR_ROUTES].map((route) => ({
  route,
  re: matcher(route),
}));

/** The lease route that answers `method path` (query string ignored), if any. */
export function leaseRouteOf(method: string, path: string): RouteLike | undefined {
  const pathname = path.split('?')[0]!;
  return compiled.find((c) => c.route.method.toUpperCase() === method.toUpperCase() && c.re.test(pathname))
    ?.route;
}

/** operationIds of the lease routes whose success answers were checked (coverage of a suite). */
export const checkedOperations = new Set<string>();

/**
 * Problems of one JSON answer of a lease route against the route's documented response (empty: it
 * conforms). Answers of other routes, and bodiless ones, are not checked here.
 */
export function contractProblems(method: string, path: string, status: number, body: unknown): string[] {
  const route = leaseRouteOf(method, path);
  if (route === undefined || body === null || body === undefined) return [];
  const where = `${method} ${path} -> ${status}`;
  const response = route.responses[status] as
    | { content?: Record<string, { schema?: z.ZodType }>; 'x-error-codes'?: string[] }
    | undefined;
  if (response === undefined) return [`${where}: status ${status} is not documented`];
  const schema = response.content?.['application/json']?.schema;
  if (schema === undefined) return [`${where}: no JSON schema documented`];
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    return parsed.error.issues.map((i) => `${where}: ${i.path.join('.')}: ${i.message}`);
  }
  // Nothing the schema does not know: a parse strips unknown keys, so compare.
  const lost = differences(body, parsed.data, '$');
  if (lost.length > 0) return lost.map((d) => `${where}: ${d} is not in the schema`);
  if (status >= 400) {
    const code = (body as { error: { code: string } }).error.code;
    const codes = response['x-error-codes'] ?? [];
    if (!codes.includes(code)) return [`${where}: code ${code} is not among ${codes.join(', ')}`];
  } else if (route.operationId) {
    checkedOperations.add(route.operationId);
  }
  return [];
}

/**
 * Problems of one non-JSON success answer (a PNG) of a lease route: its status and media type must
 * be documented for the route (empty: it conforms, and the operation counts as checked).
 */
export function binaryContractProblems(
  method: string,
  path: string,
  status: number,
  contentType: string | null,
): string[] {
  const route = leaseRouteOf(method, path);
  if (route === undefined) return [`${method} ${path}: not a lease route`];
  const response = route.responses[status] as { content?: Record<string, unknown> } | undefined;
  const type = (contentType ?? '').split(';')[0]!.trim();
  if (response?.content?.[type] === undefined) {
    return [`${method} ${path} -> ${status}: ${type || 'no content type'} is not documented`];
  }
  if (route.operationId) checkedOperations.add(route.operationId);
  return [];
}

function differences(input: unknown, output: unknown, at: string): string[] {
  if (input === null || typeof input !== 'object') return [];
  if (Array.isArray(input)) {
    return input.flatMap((v, i) => differences(v, (output as unknown[] | undefined)?.[i], `${at}[${i}]`));
  }
  const out = (output ?? {}) as Record<string, unknown>;
  return Object.entries(input as Record<string, unknown>).flatMap(([k, v]) =>
    Object.hasOwn(out, k) ? differences(v, out[k], `${at}.${k}`) : [`${at}.${k}`],
  );
}

/**
 * A JSON caller of a bridge app as `token` (null: anonymous): every answer of a lease route is
 * checked against the route's documented response (contractProblems).
 */
export function contractCall(
  bridge: { app: { request: (path: string, init: RequestInit) => Response | Promise<Response> } },
  token: string | null,
) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await bridge.app.request(path, {
      method,
      headers: {
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : null;
    expect(contractProblems(method, path, res.status, json)).toEqual([]);
    // biome-ignore lint/suspicious/noExplicitAny: tests read whatever fields the answer has
    return { status: res.status, body: json as Record<string, any>, headers: res.headers };
  };
}
