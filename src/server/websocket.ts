/**
 * WebSocket upgrades on the bridge's HTTP server (the live screen, docs/live-screen.md). An upgrade
 * request runs through the Hono app like any request — the browser checks, authentication, the
 * route's guard and validation — with `c.env.upgrade` set: a route that takes the socket calls
 * `accept` and the handshake completes (`ws`); any other answer (a refusal: 401, 403, 404, 409, 429,
 * …) is written to the connection as an ordinary HTTP answer and the connection closed. Open sockets
 * are tracked so that a shutdown ends each with its route's going-away message.
 */
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { MAX_SCREEN_INPUT_BYTES } from '../api/screen.ts';

/** What an accepted socket does when the server shuts down. */
export interface OpenSocket {
  /** Tell the peer the server is going away and close. */
  goingAway(): void;
}

/** Set on an upgrade request's bindings (`c.env.upgrade`) for the route to take the socket. */
export interface WebSocketUpgrade {
  /**
   * Take the upgrade (the route's answer is then not sent): `open` gets the socket once the
   * handshake is done; `abandoned` runs instead when the handshake fails (a malformed request).
   */
  accept(open: (ws: WebSocket) => OpenSocket, abandoned?: () => void): void;
}

export type UpgradeFetch = (
  request: Request,
  env: { incoming: IncomingMessage; upgrade?: WebSocketUpgrade },
) => Response | Promise<Response>;

/** How long sockets told to go away get to close before they are cut. */
const GOING_AWAY_GRACE_MS = 2000;

export class WebSocketHub {
  readonly #fetch: UpgradeFetch;
  readonly #server = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_SCREEN_INPUT_BYTES,
    perMessageDeflate: false,
  });
  readonly #open = new Map<WebSocket, OpenSocket>();
  #closing = false;

  constructor(fetch: UpgradeFetch) {
    this.#fetch = fetch;
  }

  /** The HTTP server's `upgrade` event. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    void this.#handle(req, socket, head).catch(() => {
      refuse(socket, new Response('internal error', { status: 500 }));
    });
  }

  async #handle(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    if (this.#closing) {
      refuse(socket, new Response('the bridge is shutting down', { status: 503 }));
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
    } catch {
      refuse(socket, new Response('malformed request target or Host', { status: 400 }));
      return;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
    let taken: { open: (ws: WebSocket) => OpenSocket; abandoned: (() => void) | undefined } | undefined;
    const upgrade: WebSocketUpgrade = {
      accept(open, abandoned) {
        taken = { open, abandoned };
      },
    };
    const isWebSocket = (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
    const answer = await this.#fetch(
      new Request(url, { method: req.method ?? 'GET', headers }),
      isWebSocket ? { incoming: req, upgrade } : { incoming: req },
    );
    const accepted = taken;
    if (accepted === undefined || this.#closing) {
      accepted?.abandoned?.();
      refuse(socket, answer);
      return;
    }
    await answer.body?.cancel().catch(() => undefined);
    let opened = false;
    socket.once('close', () => {
      if (!opened) accepted.abandoned?.();
    });
    this.#server.handleUpgrade(req, socket, head, (ws) => {
      opened = true;
      const entry = accepted.open(ws);
      this.#open.set(ws, entry);
      ws.once('close', () => this.#open.delete(ws));
    });
  }

  /** The sockets open now. */
  get size(): number {
    return this.#open.size;
  }

  /** Refuse new upgrades and tell every open socket the server is going away; resolves once they closed. */
  async close(): Promise<void> {
    this.#closing = true;
    const sockets = [...this.#open];
    await Promise.all(
      sockets.map(
        ([ws, entry]) =>
          new Promise<void>((resolve) => {
            if (ws.readyState === ws.CLOSED) return resolve();
            const cut = setTimeout(() => ws.terminate(), GOING_AWAY_GRACE_MS);
            ws.once('close', () => {
              clearTimeout(cut);
              resolve();
            });
            entry.goingAway();
          }),
      ),
    );
    this.#server.close();
  }
}

/** Write `answer` as a plain HTTP answer to the upgrade request and close the connection. */
async function refuse(socket: Duplex, answer: Response): Promise<void> {
  const body = Buffer.from(await answer.arrayBuffer().catch(() => new ArrayBuffer(0)));
  const lines = [`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}`];
  answer.headers.forEach((value, name) => {
    if (!['content-length', 'connection', 'transfer-encoding'].includes(name))
      lines.push(`${name}: ${value}`);
  });
  lines.push(`Content-Length: ${body.byteLength}`, 'Connection: close', '', '');
  if (socket.destroyed) return;
  socket.end(Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), body]));
}
