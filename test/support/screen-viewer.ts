/**
 * A live screen viewer for e2e tests: a WebSocket on `GET /v1/leases/{id}/screen` of a running
 * bridge node and every message it got, in order (binary packets decoded, text messages parsed).
 */
import { WebSocket } from 'ws';
import type { RunningNode } from '../../src/node/index.ts';
import {
  decodePacketMessage,
  parseScreenTextMessage,
  type ScreenTextMessage,
} from '../../src/protocol/screen/viewer-messages.ts';
import { CLIENT_TOKEN } from './bridge.ts';
import { decodeH264 } from './screen.ts';
import { waitFor } from './wait-for.ts';

export type ViewerMessage =
  | ScreenTextMessage
  | { type: 'packet'; key: boolean; pts: number; data: Uint8Array };
export type ViewerPacket = Extract<ViewerMessage, { type: 'packet' }>;

/** A viewer: its socket and every message it got, in order. */
export class Viewer {
  readonly messages: ViewerMessage[] = [];
  readonly ws: WebSocket;
  closed = false;
  #waiters: Array<() => void> = [];
  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data, isBinary) => {
      const bytes = new Uint8Array(data as Buffer);
      this.messages.push(
        isBinary
          ? { type: 'packet', ...decodePacketMessage(bytes) }
          : parseScreenTextMessage(Buffer.from(bytes).toString('utf8')),
      );
      for (const w of this.#waiters.splice(0)) w();
    });
    ws.on('close', () => {
      this.closed = true;
      for (const w of this.#waiters.splice(0)) w();
    });
  }
  frames(): ViewerPacket[] {
    return this.messages.filter((m): m is ViewerPacket => m.type === 'packet');
  }
  /** Resolves once `condition` holds (checked at every message); throws after `timeoutMs`. */
  async until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    await waitFor(
      () =>
        condition() ||
        new Promise<false>((resolve) => {
          // The next message, or a moment (so the deadline is checked when nothing comes).
          const timer = setTimeout(() => resolve(false), 100);
          this.#waiters.push(() => {
            clearTimeout(timer);
            resolve(false);
          });
        }),
      { what, timeoutMs, intervalMs: 0 },
    );
  }
  send(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }
  /** Close the socket and wait for the close. */
  async close(): Promise<void> {
    this.ws.close();
    await this.until(() => this.closed, 'the viewer closed');
  }
}

export interface ConnectOptions {
  id: string;
  token?: string | null;
  query?: string;
  headers?: Record<string, string>;
}

/** Open a lease's screen on `node`: the viewer, or the refusal's status and error body. */
export function connectViewer(
  node: Pick<RunningNode, 'url'>,
  options: ConnectOptions,
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever fields the answer has
): Promise<Viewer | { status: number; body: Record<string, any> }> {
  const token = options.token === undefined ? CLIENT_TOKEN : options.token;
  const url = `${node.url.replace(/^http/, 'ws')}/v1/leases/${options.id}/screen${options.query ?? ''}`;
  const ws = new WebSocket(url, {
    headers: { ...(token === null ? {} : { Authorization: `Bearer ${token}` }), ...options.headers },
  });
  return new Promise((resolve, reject) => {
    const viewer = new Viewer(ws);
    ws.once('open', () => resolve(viewer));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d: Buffer) => {
        text += d.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
    });
    ws.once('error', reject);
  });
}

/** Decode a viewer's packets (from its first key frame, which carries the SPS/PPS) as RGB frames. */
export function decodeViewerPackets(packets: ViewerPacket[], width: number, height: number) {
  const from = packets.findIndex((p) => p.key);
  if (from < 0) throw new Error('no key frame to decode from');
  return decodeH264(Buffer.concat(packets.slice(from).map((p) => p.data)), width, height);
}
