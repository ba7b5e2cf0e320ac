/**
 * Push a file over an open `sync:` stream (protocol/adb/sync-protocol.ts does the framing). Writes respect the
 * socket's backpressure; a `FAIL` the device sends early (e.g. a read-only path) ends the transfer
 * at once instead of after the whole file.
 */
import { createReadStream } from 'node:fs';
import type { Duplex, Readable } from 'node:stream';
import {
  encodeSyncData,
  encodeSyncDone,
  encodeSyncQuit,
  encodeSyncSend,
  SYNC_DATA_MAX,
  SyncPushReplyReader,
} from '../protocol/adb/sync-protocol.ts';

export interface PushOptions {
  mode: number;
  onProgress?: (bytes: number) => void;
  /** mtime to record (seconds); default now. */
  mtimeSec?: number;
}

/** Resolves once the device answered OKAY; rejects with its FAIL (AdbFailError) or the stream's end. */
export async function pushOver(
  socket: Duplex,
  source: string | Readable,
  remotePath: string,
  options: PushOptions,
): Promise<void> {
  const reader = new SyncPushReplyReader();
  let failure: unknown;
  let settle: (() => void) | undefined;
  const reply = new Promise<void>((resolve, reject) => {
    const fail = (err: unknown) => {
      failure ??= err;
      settle?.();
      reject(failure);
    };
    socket.on('data', (chunk: Buffer) => {
      try {
        if (reader.push(chunk) === 'OKAY') resolve();
      } catch (err) {
        fail(err);
      }
    });
    socket.once('close', () => fail(new Error('closed')));
    socket.once('error', fail);
  });
  reply.catch(() => undefined);
  socket.resume();

  const write = async (bytes: Buffer) => {
    if (failure !== undefined) throw failure;
    if (socket.write(bytes)) return;
    await new Promise<void>((resolve) => {
      settle = resolve;
      socket.once('drain', resolve);
    });
    socket.off('drain', settle ?? (() => undefined));
    settle = undefined;
    if (failure !== undefined) throw failure;
  };

  const input =
    typeof source === 'string' ? createReadStream(source, { highWaterMark: SYNC_DATA_MAX }) : source;
  try {
    await write(encodeSyncSend(remotePath, options.mode));
    let sent = 0;
    for await (const chunk of input) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      for (const packet of encodeSyncData(bytes)) await write(packet);
      sent += bytes.length;
      options.onProgress?.(sent);
    }
    await write(encodeSyncDone(options.mtimeSec ?? Math.floor(Date.now() / 1000)));
  } catch (err) {
    input.destroy();
    // The device's own reason (its FAIL), when it gave one, says more than a write error.
    throw failure ?? err;
  }
  await reply;
  socket.end(encodeSyncQuit());
}
