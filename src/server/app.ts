/** The Hono app: middleware, routes and the OpenAPI document. Services come in; nothing is global. */
import { OpenAPIHono } from '@hono/zod-openapi';
import { errorCodeExtension } from '../api/index.ts';
import { ConsoleSessions } from '../auth/console-sessions.ts';
import { McpHttpSessions } from '../mcp/http-sessions.ts';
import type { AppEnv, Services } from './env.ts';
import { authenticate } from './middleware/auth.ts';
import { browserRequests } from './middleware/browser-requests.ts';
import { notFound, onError, validationHook } from './middleware/errors.ts';
import { guardPolicyOf } from './middleware/guard.ts';
import { requestId } from './middleware/request-id.ts';
import { registerArtifacts } from './routes/artifacts.ts';
import { registerConsole } from './routes/console.ts';
import { registerDevices } from './routes/devices.ts';
import { registerHealth } from './routes/health.ts';
import { registerHelpers } from './routes/helpers.ts';
import { registerLeases } from './routes/leases/index.ts';
import { registerManifests } from './routes/manifests.ts';
import { registerMcp } from './routes/mcp.ts';
import { registerReleases } from './routes/releases.ts';
import { registerWhoami } from './routes/whoami.ts';

/**
 * Count every route handler entered, by route and caller: the witness (scraped by the fuzz suite)
 * that no handler of a route with `security` ever runs for an anonymous caller.
 */
function countHandlerRuns(app: OpenAPIHono<AppEnv>): void {
  const register = app.openapi.bind(app);
  app.openapi = (route, handler, hook) =>
    register(
      route,
      (c, next) => {
        const caller = c.get('principal')?.role ?? 'anonymous';
        c.get('services').metrics.handlerRuns.inc({ route: route.path, caller });
        return handler(c, next);
      },
      hook,
    );
}

/**
 * Declare each operation's guard in the document: `x-access` (who may call it: `anyone`, `client`,
 * `admin`, or `admin-when-tokens`), `x-capability` (a token capability it needs besides the role)
 * and `x-rate-limited: expensive` (counted against the expensive-call limit). A route without a
 * guard checks no caller: `anyone`.
 */
function declareAccess(app: OpenAPIHono<AppEnv>): void {
  const register = app.openapi.bind(app);
  app.openapi = (route, handler, hook) => {
    const middleware = Array.isArray(route.middleware) ? route.middleware : [route.middleware];
    const policy = middleware.map(guardPolicyOf).find((p) => p !== undefined) ?? { access: 'anyone' };
    return register(
      {
        ...route,
        'x-access': policy.access,
        ...(policy.capability === undefined ? {} : { 'x-capability': policy.capability }),
        ...(policy.expensive ? { 'x-rate-limited': 'expensive' } : {}),
      },
      handler,
      hook,
    );
  };
}

/** The document's top level (paths and components come from the routes). */
const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Device Bridge',
    version: '1',
    description:
      'Release manifests and artifacts for on-device helpers, device leases and helper operations. ' +
      'Errors are {"error":{code,message,requestId,retryable,details?}}; the code fixes the HTTP ' +
      'status (see the Error schema and `x-error-codes`), and every error response of an operation ' +
      'names the codes it can carry in its own `x-error-codes`.',
    license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
  },
  servers: [{ url: '/', description: 'this bridge' }],
  tags: [
    { name: 'health', description: 'liveness, readiness, metrics' },
    { name: 'auth', description: 'who the caller is and what its token may do' },
    { name: 'releases', description: 'helper release manifests, artifacts and publishing' },
    { name: 'devices', description: 'the devices this bridge drives' },
    { name: 'leases', description: 'exclusive, fenced use of one device' },
    { name: 'helper operations', description: 'on-device helper calls under a lease' },
    {
      name: 'glass companions',
      description:
        "the lease's glass agent (clipboard, text, keys, pointer) and a11y service (accessibility tree, set_text, click)",
    },
    { name: 'doctor', description: 'every capability of a leased device checked; a report to send back' },
    {
      name: 'MCP',
      description:
        'the Model Context Protocol for AI agents (Streamable HTTP): the devices as tools, see docs/mcp.md',
    },
  ],
  'x-error-codes': errorCodeExtension(),
};

export function createApp(services: Services): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  countHandlerRuns(app);
  declareAccess(app);

  app.use('*', async (c, next) => {
    c.set('services', services);
    await next();
  });
  app.use('*', requestId());
  app.use('*', async (c, next) => {
    await next();
    // Draining: the answer to the request in progress is the connection's last.
    if (services.draining) c.header('Connection', 'close');
  });
  app.use('*', async (c, next) => {
    const started = performance.now();
    await next();
    const route = c.req.routePath ?? 'unknown';
    const labels = { method: c.req.method, route };
    const seconds = (performance.now() - started) / 1000;
    services.metrics.httpRequests.inc({ ...labels, status: String(c.res.status) });
    services.metrics.httpDuration.observe(labels, seconds);
    // The access log: never headers (tokens) or query strings (presigned URLs).
    c.get('logger').info(
      { method: c.req.method, route, status: c.res.status, ms: Math.round(seconds * 100_000) / 100 },
      'request',
    );
  });
  // Browsers: without tokens, a Host that is not loopback and pages of other origins are refused;
  // with tokens, a sign-in form posted from another origin.
  app.use('*', browserRequests());
  // Console sessions: the cookie stands for the token it was opened with. In the services' store
  // (Redis in a fleet: every node honours them), else this app's memory.
  const sessions = services.consoleSessions ?? new ConsoleSessions();
  app.use('*', authenticate(sessions));

  registerHealth(app);
  registerHelpers(app);
  registerArtifacts(app);
  registerManifests(app);
  registerReleases(app);
  registerDevices(app);
  registerLeases(app);
  registerWhoami(app);
  registerConsole(app, sessions);
  // MCP sessions: in this node's memory (the services' own when given, so tests and shutdown reach them).
  services.mcpSessions ??= new McpHttpSessions();
  registerMcp(app, services.mcpSessions);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'a token of the tokens file (role client or admin); see docs/authentication-and-limits.md',
  });
  app.doc31('/v1/openapi.json', openApiDocument);
  app.notFound(notFound);
  app.onError(onError);
  return app;
}
