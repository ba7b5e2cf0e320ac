/**
 * Request bodies at the edge: framing judged from headers only, and byte limits enforced while the
 * body streams (chunked uploads included), never after buffering it.
 */
import type { Readable } from 'node:stream';
import type { Context } from 'hono';
import { BridgeError, isBridgeError } from '../errors.ts';
import type { AppEnv } from './env.ts';

export function tooLarge(limit: number, what = 'the request body'): BridgeError {
  return new BridgeError('PAYLOAD_TOO_LARGE', `${what} exceeds the limit of ${limit} bytes`, {
    details: { limitBytes: limit },
  });
}

/** The media type's essence (`application/json; charset=utf-8` → `application/json`). */
export function mediaTypeOf(c: Context<AppEnv>): string {
  return (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Whether the request carries a body (judged from its headers, never by reading it). */
export function hasBody(c: Context<AppEnv>): boolean {
  const length = c.req.header('content-length');
  if (length !== undefined) return length.trim() !== '0';
  if (c.req.header('transfer-encoding') !== undefined) return true;
  // In-process requests (app.request) carry a body without framing headers; Node's server does not.
  return c.req.raw.body !== null && c.env?.incoming === undefined;
}

/**
 * `stream` passed through unchanged until more than `limit` bytes went by; then it errors with
 * PAYLOAD_TOO_LARGE (and stops reading: the rest of an oversized body is never pulled by us).
 */
export function limitedStream(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  what?: string,
): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      seen += value.byteLength;
      if (seen > limit) {
        controller.error(tooLarge(limit, what));
        return;
      }
      controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * How long a small body (JSON, a form, a manifest to validate: at most a few hundred KiB) may take
 * to arrive once its headers are in. An honest client sends it at once; one that trickles bytes in
 * to hold the connection (slowloris) gets 408 and its connection closed, long before the request
 * timeout. Uploads stream under the request timeout instead.
 */
export const SMALL_BODY_DEADLINE_MS = 10_000;

/**
 * Read the whole (limited) body as bytes; errors name the limit. On the Node server the body is read
 * straight from the `IncomingMessage` (no web `Request` and `ReadableStream` materialised per call);
 * an in-process request (`app.request`), or one whose body someone already started to read, goes
 * through the web stream. A body that takes longer than `deadlineMs` is REQUEST_TIMEOUT (Node path).
 */
export async function readLimited(
  c: Context<AppEnv>,
  limit: number,
  deadlineMs = SMALL_BODY_DEADLINE_MS,
): Promise<Uint8Array> {
  const incoming = c.env?.incoming;
  if (incoming !== undefined && incoming.readableFlowing === null && !incoming.readableDidRead) {
    try {
      return await readIncoming(incoming, limit, deadlineMs);
    } catch (err) {
      // A body that trickles in is not read any further: the answer closes its connection.
      if (isBridgeError(err) && err.code === 'REQUEST_TIMEOUT') c.header('Connection', 'close');
      throw err;
    }
  }
  const body = c.req.raw.body;
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    // Stop pulling at once: the rest of an oversized body is left to the server's bounded drain.
    if (size > limit) throw tooLarge(limit);
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

/**
 * The body of a Node request under `limit`: PAYLOAD_TOO_LARGE as soon as more went by, and the
 * stream paused there (the rest is left to the server's bounded drain, as on the web path).
 */
export function readIncoming(incoming: Readable, limit: number, deadlineMs?: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    if (incoming.destroyed) {
      reject(
        incoming.errored ?? new Error('the client closed the connection before sending the request body'),
      );
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const timer =
      deadlineMs === undefined
        ? undefined
        : setTimeout(() => {
            cleanup();
            incoming.pause();
            reject(
              new BridgeError(
                'REQUEST_TIMEOUT',
                `the request body did not arrive within ${deadlineMs / 1000} s (${size} bytes came): a body this small is sent at once`,
              ),
            );
          }, deadlineMs);
    const cleanup = () => {
      clearTimeout(timer);
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) {
        cleanup();
        incoming.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onClose = () => {
      if (incoming.readableEnded) return onEnd();
      cleanup();
      reject(incoming.errored ?? new Error('the client closed the connection before the request body ended'));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/**
 * A small `application/x-www-form-urlencoded` body (the console's sign-in and sign-out forms) read
 * under `limit` and parsed into its fields (the last value of a repeated name wins). Another media
 * type is UNSUPPORTED_MEDIA_TYPE; no body is no fields.
 */
export async function readForm(c: Context<AppEnv>, limit: number): Promise<Record<string, string>> {
  if (!hasBody(c)) return {};
  const type = mediaTypeOf(c);
  if (type !== FORM_MEDIA_TYPE) {
    throw new BridgeError(
      'UNSUPPORTED_MEDIA_TYPE',
      `this route takes ${FORM_MEDIA_TYPE}${type === '' ? ' (the request has no Content-Type)' : `, not ${type}`}`,
      { details: { accepted: [FORM_MEDIA_TYPE] } },
    );
  }
  const declared = Number(c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const text = Buffer.from(await readLimited(c, limit)).toString('utf8');
  return Object.fromEntries(new URLSearchParams(text));
}
