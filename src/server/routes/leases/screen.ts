import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import {
  errorResponses,
  LEASE_ERRORS,
  LeaseIdParam,
  ScreenQuerySchema,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import { describeValue } from '../../../describe-value.ts';
import { BridgeError } from '../../../errors.ts';
import type { AppEnv } from '../../env.ts';
import { crossSiteReason } from '../../middleware/browser-requests.ts';
import { guard } from '../../middleware/guard.ts';
import { PROXIED_HEADER } from '../../middleware/owner-proxy.ts';
import { openOwnerSocket, relaySockets, serveViewer } from '../../screen-socket.ts';
import { scopeFor } from './common.ts';
import { GLASS_TAG } from './glass-common.ts';

export const screenRoute = createRoute({
  method: 'get',
  path: '/v1/leases/{id}/screen',
  operationId: 'openScreen',
  tags: [GLASS_TAG],
  summary: "The leased device's live screen (H.264) with pointer, key and text input, on a WebSocket",
  description:
    'A WebSocket (`Upgrade: websocket`): the bridge sends a `start` text message, then one H.264 ' +
    'access unit per binary message (every key frame with the SPS and PPS before it), `skipped` ' +
    'when the viewer fell behind and `end` when the stream ends (the lease ended: `lease-ended`); ' +
    'the viewer sends `pointer`, `key` and `text` messages. The query applies to the viewer that ' +
    'starts the device stream; later viewers join it. Browsers authenticate with the console ' +
    "session's cookie and must come from the bridge's own origin. The messages: docs/live-screen.md. " +
    'A refused upgrade is an ordinary HTTP error answer.',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', forward: 'websocket' }),
  request: { params: z.object({ id: LeaseIdParam }), query: ScreenQuerySchema },
  responses: {
    101: { description: 'Switching Protocols: the live screen WebSocket (docs/live-screen.md)' },
    ...errorResponses(SECURED_ERRORS, LEASE_ERRORS, ['CROSS_SITE_REQUEST', 'RATE_LIMITED']),
  },
});

/**
 * A browser's socket must come from a page of the bridge itself (its Host, or its public URL): a
 * WebSocket carries the console's cookie from any page, and is not held to the same-origin policy.
 */
function checkOrigin(c: Context<AppEnv>): void {
  const { publicUrl } = c.get('services');
  const reason = crossSiteReason(
    {
      method: 'GET',
      host: c.req.header('host') ?? new URL(c.req.url).host,
      origin: c.req.header('origin'),
      fetchSite: c.req.header('sec-fetch-site'),
    },
    publicUrl === undefined ? [] : [new URL(publicUrl).origin],
  );
  if (reason !== null) {
    throw new BridgeError(
      'CROSS_SITE_REQUEST',
      `a live screen socket from a page of another origin (${reason}) is refused: open it from the bridge's console`,
    );
  }
}

export function registerScreen(app: OpenAPIHono<AppEnv>): void {
  app.openapi(screenRoute, async (c) => {
    const upgrade = c.env?.upgrade;
    if (upgrade === undefined) {
      const asked = c.req.header('upgrade');
      if (asked?.toLowerCase() === 'websocket') {
        // Asked right, but this server was started without the WebSocket hook (an embedding that
        // serves only the app's fetch): the server's setup, not the request, is at fault.
        throw new BridgeError(
          'UNAVAILABLE',
          'this server does not take WebSocket upgrades: serve the bridge with `devicebridge serve` (or its listen()) for the live screen',
        );
      }
      throw new BridgeError(
        'INVALID_ARGUMENT',
        `this route is a WebSocket: ask for it with Upgrade: websocket (got ${describeValue(asked ?? 'no Upgrade header')})`,
      );
    }
    checkOrigin(c);
    if (c.get('services').draining) {
      throw new BridgeError('UNAVAILABLE', 'this bridge node is shutting down; connect to another node', {
        retryable: true,
      });
    }
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const logger = c.get('logger');
    const { owner } = scope;
    if (owner.kind === 'remote' && owner.url !== null && c.req.header(PROXIED_HEADER) === undefined) {
      const upstream = await openOwnerSocket(c, { node: owner.node, url: owner.url }, scope.lease.deviceId);
      if (upstream instanceof Response) return upstream;
      upgrade.accept(
        (ws) => relaySockets(ws, upstream),
        () => upstream.close(),
      );
      return c.body(null, 200);
    }
    const viewer = await side.room.screen.join(side.scopes.local(scope), c.req.valid('query'));
    upgrade.accept(
      (ws) => serveViewer(ws, viewer, logger),
      () => viewer.leave(),
    );
    return c.body(null, 200);
  });
}
