/**
 * adb's file sync protocol, host side (AOSP `SYNC.TXT`, `file_sync_protocol.h`), for pushing a file.
 * Pure. After `sync:` is open on a device's transport:
 *
 * - every request is a 4-byte ASCII id and a u32 little-endian argument, then (for most ids) that
 *   many bytes: `SEND` + length + `PATH,MODE` (MODE decimal, with the file-type bits), then `DATA` +
 *   length + at most 64 KiB per chunk, then `DONE` + the mtime in seconds (no body), finally `QUIT`;
 * - the device answers a push once, after `DONE`: `OKAY` + 0, or `FAIL` + length + message.
 *
 * The simulator's adbd decodes the same requests with its own decoder (src/simulator/adbd/sync-protocol.ts).
 */
import { AdbFailError, AdbProtocolError } from './host-protocol.ts';

export const SYNC_DATA_MAX = 64 * 1024;
/** `S_IFREG`: a push creates a regular file; adb adds it to the permission bits. */
export const S_IFREG = 0o100000;

export type SyncPushRequestId = 'SEND' | 'DATA' | 'DONE' | 'QUIT';

/** One request: id, u32 LE argument (the body's length, or DONE's mtime), body. */
export function encodeSyncRequest(id: SyncPushRequestId, arg: number, body?: Uint8Array): Buffer {
  const header = Buffer.alloc(8);
  header.write(id, 0, 4, 'latin1');
  header.writeUInt32LE(arg >>> 0, 4);
  return body === undefined || body.length === 0 ? header : Buffer.concat([header, body]);
}

/** `SEND` for `path` with permission bits `mode` (S_IFREG is added). */
export function encodeSyncSend(path: string, mode: number): Buffer {
  const spec = Buffer.from(`${path},${(mode & 0o7777) | S_IFREG}`, 'utf8');
  return encodeSyncRequest('SEND', spec.length, spec);
}

/** `DATA` chunks of at most 64 KiB each. */
export function encodeSyncData(bytes: Uint8Array): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += SYNC_DATA_MAX) {
    const part = bytes.subarray(i, i + SYNC_DATA_MAX);
    out.push(encodeSyncRequest('DATA', part.length, part));
  }
  return out;
}

export function encodeSyncDone(mtimeSec: number): Buffer {
  return encodeSyncRequest('DONE', mtimeSec);
}

export function encodeSyncQuit(): Buffer {
  return encodeSyncRequest('QUIT', 0);
}

/**
 * The device's answer to a push, from bytes in any split: `push` returns 'OKAY' once complete,
 * undefined while more bytes are needed; a complete `FAIL` throws AdbFailError, anything else
 * AdbProtocolError.
 */
export class SyncPushReplyReader {
  #buffer: Buffer = Buffer.alloc(0);

  push(bytes: Uint8Array): 'OKAY' | undefined {
    this.#buffer = Buffer.concat([this.#buffer, bytes]);
    if (this.#buffer.length < 8) return undefined;
    const id = this.#buffer.subarray(0, 4).toString('latin1');
    const arg = this.#buffer.readUInt32LE(4);
    if (id === 'OKAY') return 'OKAY';
    if (id !== 'FAIL')
      throw new AdbProtocolError(`expected OKAY or FAIL after a push, got ${JSON.stringify(id)}`);
    if (arg > SYNC_DATA_MAX) throw new AdbProtocolError(`sync FAIL message of ${arg} bytes`);
    if (this.#buffer.length < 8 + arg) return undefined;
    throw new AdbFailError(this.#buffer.subarray(8, 8 + arg).toString('utf8'));
  }
}
