/**
 * The typed client's live screen (docs/live-screen.md): the lease's WebSocket opened with the
 * client's token (the `ws` package: Node's global WebSocket cannot send an Authorization header),
 * read as events — `start`, `packet` (one H.264 access unit), `skipped`, `end`, `error` — with
 * senders for pointer, key and text input.
 */
import { WebSocket } from 'ws';
import {
  decodePacketMessage,
  parseScreenTextMessage,
  type ScreenPacketMessage,
  type ScreenTextMessage,
} from '../protocol/screen/viewer-messages.ts';

export type ScreenClientEvent = ScreenTextMessage | ({ type: 'packet' } & ScreenPacketMessage);

export interface ScreenOptions {
  /** The longer side of the picture at most this many pixels (the viewer that starts the stream sets it). */
  maxSize?: number;
  bitRate?: number;
  maxFps?: number;
  signal?: AbortSignal;
  /** How long the handshake may take (default 30 s). */
  handshakeTimeoutMs?: number;
}

/** An open live screen: its events as an async iterable, and input senders. */
export interface ScreenConnection extends AsyncIterable<ScreenClientEvent> {
  /**
   * A pointer action at (x, y) in the picture's pixels (of the last `start`); `cancel` ends the
   * finger without an up (no click).
   */
  pointer(action: 'down' | 'move' | 'up' | 'cancel', x: number, y: number): void;
  /** A key or chord, as `pressKeys` takes it (`enter`, `ctrl+a`). */
  key(key: string): void;
  /** Unicode text, typed into the focused field. */
  text(text: string): void;
  /** Close the socket; the events end. */
  close(): void;
}

/** The refusal of an upgrade: its status and the answer's JSON error body, when it has one. */
export interface ScreenRefusal {
  status: number;
  body: string;
  requestId: string | undefined;
}

/**
 * Open the socket at `url` (ws: or wss:) with `headers`; a refused upgrade rejects with
 * `refused(refusal)`'s error.
 */
export function openScreenSocket(
  url: string,
  headers: Record<string, string>,
  options: ScreenOptions,
  refused: (refusal: ScreenRefusal) => Error,
): Promise<ScreenConnection> {
  const ws = new WebSocket(url, {
    headers,
    perMessageDeflate: false,
    handshakeTimeout: options.handshakeTimeoutMs ?? 30_000,
  });
  const events: ScreenClientEvent[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let failure: Error | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  ws.on('message', (data, isBinary) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    try {
      events.push(
        isBinary
          ? { type: 'packet', ...decodePacketMessage(new Uint8Array(bytes)) }
          : parseScreenTextMessage(bytes.toString('utf8')),
      );
    } catch (err) {
      failure = err as Error;
      ws.terminate();
    }
    notify();
  });
  ws.on('close', () => {
    done = true;
    notify();
  });
  const abort = () => ws.close(1000);
  options.signal?.addEventListener('abort', abort, { once: true });
  const send = (message: object) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  };
  const connection: ScreenConnection = {
    pointer: (action, x, y) => send({ type: 'pointer', action, x, y }),
    key: (key) => send({ type: 'key', key }),
    text: (text) => send({ type: 'text', text }),
    close: () => ws.close(1000),
    async *[Symbol.asyncIterator]() {
      try {
        for (;;) {
          const next = events.shift();
          if (next !== undefined) {
            yield next;
            continue;
          }
          if (failure !== undefined) throw failure;
          if (done) return;
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
      } finally {
        options.signal?.removeEventListener('abort', abort);
        if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000);
      }
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(connection));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const requestId = res.headers['x-request-id'];
        reject(
          refused({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            requestId: typeof requestId === 'string' ? requestId : undefined,
          }),
        );
        ws.terminate();
      });
    });
    ws.once('error', (err) => reject(err));
  });
}
