/**
 * Serving a glass line protocol on an in-device listener, as the Android components do: the
 * banner, then one reply line per request line (UTF-8; lines end at "\n", "\r\n" or "\r", as Java's
 * BufferedReader.readLine splits them; blank lines are skipped), one client at a time — a client
 * that connects while another is served waits, as in the kernel's backlog, until the first leaves.
 */
import type { Duplex } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { Faults } from '../types.ts';
import { GLASS_HELLO } from './line-protocol.ts';

/** Longest request line kept (the bridge's lines are far shorter); longer lines close the client. */
export const MAX_LINE_CHARS = 4 * 1024 * 1024;

export interface LineServer {
  /** Give the server a connection (from `SimDevice.listen`). */
  accept(socket: Duplex): void;
  /** Drop every client (served or waiting). */
  close(): void;
}

/** Answers one request line; null sends nothing (the process died on it). */
export type LineHandler = (line: string) => string | null;

/**
 * A handler with state of its own connection (Java's LineServer.ConnectionHandler): told once when
 * that connection has ended, however it ended, before the server closes its side.
 */
export interface LineConnection {
  handle: LineHandler;
  ended(): void;
}

/** The reply as the `glass-malformed` fault tears it: its first half, no closing brace (not JSON). */
export function tornReply(reply: string): string {
  return reply.slice(0, Math.ceil(reply.length / 2));
}

/**
 * `newHandler` is called once per client (the a11y service and the agent keep per-connection
 * state; a `LineConnection` is told when its client's connection ended). With `faults`, the
 * one-shot `glassMalformed` tears the next reply line.
 */
export function lineServer(newHandler: () => LineHandler | LineConnection, faults?: Faults): LineServer {
  const waiting: Duplex[] = [];
  let serving: Duplex | null = null;
  let closed = false;

  const next = (): void => {
    if (closed) return;
    while (serving === null && waiting.length > 0) {
      const socket = waiting.shift() as Duplex;
      if (socket.destroyed) continue;
      serving = socket;
      const made = newHandler();
      const connection: LineConnection =
        typeof made === 'function' ? { handle: made, ended: () => undefined } : made;
      const handle: LineHandler = (line) => {
        const reply = connection.handle(line);
        if (reply === null || faults?.glassMalformed !== true) return reply;
        delete faults.glassMalformed;
        return tornReply(reply);
      };
      serve(socket, handle, () => {
        connection.ended();
        serving = null;
        next();
      });
    }
  };

  return {
    accept(socket) {
      if (closed) {
        socket.destroy();
        return;
      }
      socket.on('error', () => socket.destroy());
      waiting.push(socket);
      next();
    },
    close() {
      closed = true;
      for (const socket of waiting.splice(0)) socket.destroy();
      serving?.destroy();
      serving = null;
    },
  };
}

function serve(socket: Duplex, handle: LineHandler, done: () => void): void {
  const decoder = new StringDecoder('utf8');
  let buffer = '';
  let skipLf = false;
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    done();
  };
  socket.write(`${GLASS_HELLO}\n`);
  const onLine = (line: string): void => {
    if (socket.destroyed) return;
    if (line.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '') === '') return; // Java's trim()
    const reply = handle(line);
    if (reply !== null && !socket.destroyed) socket.write(`${reply}\n`);
  };
  socket.on('data', (chunk: Buffer) => {
    let text = decoder.write(chunk);
    if (skipLf && text.startsWith('\n')) text = text.slice(1);
    skipLf = false;
    buffer += text;
    for (let i = buffer.search(/[\r\n]/); i !== -1; i = buffer.search(/[\r\n]/)) {
      const line = buffer.slice(0, i);
      if (buffer[i] === '\r') {
        if (i + 1 < buffer.length) buffer = buffer.slice(i + (buffer[i + 1] === '\n' ? 2 : 1));
        else {
          buffer = '';
          skipLf = true;
        }
      } else buffer = buffer.slice(i + 1);
      onLine(line);
    }
    if (buffer.length > MAX_LINE_CHARS) socket.destroy();
  });
  socket.on('end', () => {
    const rest = buffer + decoder.end();
    buffer = '';
    if (rest !== '') onLine(rest);
    // The connection's state is undone before this side closes (as the Java accept loop does).
    finish();
    socket.end();
  });
  socket.on('close', finish);
}
