/**
 * The live screen's socket ends (docs/live-screen.md): a viewer served here (its input messages
 * checked by the contract and handed to the lease's screen; the screen's messages written through
 * the viewer's bounded queue), and a viewer relayed to the owner node's socket when another node
 * drives the device (both directions copied; the viewer's side is held to a bound by pausing the
 * owner's socket, so the owner's queue for this viewer fills and skips to the next key frame).
 */
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { type RawData, WebSocket } from 'ws';
import { ScreenInputSchema } from '../api/screen.ts';
import { isSessionId, SESSION_COOKIE } from '../auth/console-sessions.ts';
import { BridgeError } from '../errors.ts';
import type { ScreenViewer } from '../lease-session/index.ts';
import type { Logger } from '../observability/logger.ts';
import type { ScreenEndReason } from '../protocol/screen/viewer-messages.ts';
import type { AppEnv } from './env.ts';
import { PROXIED_HEADER } from './middleware/owner-proxy.ts';
import type { OpenSocket } from './websocket.ts';

/** WebSocket close codes: normal, going away. */
const CLOSE_NORMAL = 1000;
const CLOSE_GOING_AWAY = 1001;

/** ws's send options, made once (a frame is sent per packet per viewer). */
const TEXT = { binary: false } as const;
const BINARY = { binary: true } as const;

const errorMessage = (code: string, message: string) => JSON.stringify({ type: 'error', code, message });

/** Serve `viewer` on `ws`: input in, the screen's messages out. */
export function serveViewer(ws: WebSocket, viewer: ScreenViewer, logger: Logger): OpenSocket {
  viewer.attach({
    send: (message, done) => {
      if (ws.readyState !== ws.OPEN) return done(new Error('the viewer is gone'));
      ws.send(message, typeof message === 'string' ? TEXT : BINARY, done);
    },
    close: () => ws.close(CLOSE_NORMAL),
  });
  ws.on('message', (data, isBinary) => {
    if (isBinary) {
      viewer.queue.control(errorMessage('INVALID_ARGUMENT', 'input messages are JSON text'));
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(data.toString());
    } catch {
      viewer.queue.control(errorMessage('INVALID_ARGUMENT', 'an input message must be JSON'));
      return;
    }
    const parsed = ScreenInputSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
      viewer.queue.control(errorMessage('INVALID_ARGUMENT', `${where}${issue?.message ?? 'invalid input'}`));
      return;
    }
    viewer.input(parsed.data);
  });
  ws.on('close', () => viewer.leave());
  ws.on('error', (err) => logger.debug({ err: err.message }, 'screen viewer socket failed'));
  return { goingAway: () => viewer.end('going-away', 'the bridge node is shutting down') };
}

/** The viewer's side may hold this much unsent before the owner's socket is paused. */
const RELAY_HIGH_WATER_BYTES = 1024 * 1024;

/**
 * Open the owner node's socket for the same lease and query, as the caller (its bearer header or
 * console session), marked as forwarded. Resolves the open socket, or the owner's refusal as a
 * `Response` to relay; UNAVAILABLE when the owner does not answer.
 */
export async function openOwnerSocket(
  c: Context<AppEnv>,
  owner: { node: string; url: string },
  deviceId: string,
): Promise<WebSocket | Response> {
  const url = new URL(c.req.url);
  const target = new URL(`${owner.url.replace(/\/+$/, '')}${url.pathname}${url.search}`);
  target.protocol = target.protocol === 'https:' ? 'wss:' : 'ws:';
  const headers: Record<string, string> = {
    'x-request-id': c.get('requestId'),
    [PROXIED_HEADER]: c.get('services').deviceSide?.node ?? 'unknown',
  };
  for (const name of ['authorization', 'x-fencing-token']) {
    const value = c.req.header(name);
    if (value !== undefined) headers[name] = value;
  }
  const session = getCookie(c, SESSION_COOKIE);
  if (headers['authorization'] === undefined && isSessionId(session)) {
    headers['cookie'] = `${SESSION_COOKIE}=${session}`;
  }
  const timeoutMs = c.get('services').config.forwardTimeoutMs;
  c.get('logger').info({ deviceId, ownerNode: owner.node }, 'relaying the live screen to the owner node');
  const upstream = new WebSocket(target, {
    headers,
    perMessageDeflate: false,
    handshakeTimeout: timeoutMs,
    followRedirects: false,
  });
  // What the owner sends before the viewer's own socket is open is kept for it (`relaySockets`).
  const early: Array<[RawData, boolean]> = [];
  const keep = (data: RawData, isBinary: boolean) => early.push([data, isBinary]);
  upstream.on('message', keep);
  EARLY.set(upstream, { messages: early, keep });
  return new Promise<WebSocket | Response>((resolve, reject) => {
    upstream.once('open', () => resolve(upstream));
    upstream.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const relayed = new Headers({ [PROXIED_HEADER]: owner.node });
        for (const name of ['content-type', 'retry-after']) {
          const value = res.headers[name];
          if (typeof value === 'string') relayed.set(name, value);
        }
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 502, headers: relayed }));
        upstream.terminate();
      });
      res.on('error', () => undefined);
    });
    upstream.once('error', (err) => {
      reject(
        new BridgeError(
          'UNAVAILABLE',
          `the owner node ${owner.node} of device ${deviceId} is not reachable (${err.message}); retry`,
          { retryable: true, details: { ownerNode: owner.node, deviceId } },
        ),
      );
    });
  });
}

/** What an owner's socket sent before it was relayed, and the listener that kept it. */
const EARLY = new WeakMap<
  WebSocket,
  { messages: Array<[RawData, boolean]>; keep: (data: RawData, isBinary: boolean) => void }
>();

/** Copy messages both ways between the viewer's socket and the owner's; either closing closes the other. */
export function relaySockets(viewer: WebSocket, upstream: WebSocket): OpenSocket {
  let paused = false;
  const early = EARLY.get(upstream);
  if (early !== undefined) {
    upstream.off('message', early.keep);
    EARLY.delete(upstream);
    for (const [data, isBinary] of early.messages) viewer.send(data, { binary: isBinary });
  }
  upstream.on('message', (data, isBinary) => {
    if (viewer.readyState !== viewer.OPEN) return;
    viewer.send(data, { binary: isBinary }, () => {
      if (paused && viewer.bufferedAmount < RELAY_HIGH_WATER_BYTES / 2) {
        paused = false;
        upstream.resume();
      }
    });
    if (!paused && viewer.bufferedAmount > RELAY_HIGH_WATER_BYTES) {
      paused = true;
      upstream.pause();
    }
  });
  viewer.on('message', (data, isBinary) => {
    if (upstream.readyState === upstream.OPEN) upstream.send(data, { binary: isBinary });
  });
  const closeCode = (code: number) => (code >= 1000 && code <= 1003) || (code >= 3000 && code <= 4999);
  upstream.on('close', (code, reason) => {
    if (viewer.readyState === viewer.OPEN) viewer.close(closeCode(code) ? code : CLOSE_NORMAL, reason);
  });
  viewer.on('close', () => upstream.close(CLOSE_NORMAL));
  upstream.on('error', () => viewer.terminate());
  viewer.on('error', () => upstream.terminate());
  return {
    goingAway: () => {
      const end: { type: 'end'; reason: ScreenEndReason; message: string } = {
        type: 'end',
        reason: 'going-away',
        message: 'the bridge node relaying this screen is shutting down',
      };
      if (viewer.readyState === viewer.OPEN)
        viewer.send(JSON.stringify(end), () => viewer.close(CLOSE_GOING_AWAY));
      upstream.close(CLOSE_NORMAL);
    },
  };
}
