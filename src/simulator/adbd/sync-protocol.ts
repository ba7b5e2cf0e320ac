/**
 * adb's file sync protocol (AOSP `SYNC.TXT`, `file_sync_protocol.h`): requests are a 4-byte id,
 * a 4-byte little-endian length and (for most ids) that many bytes; `DONE` carries the mtime in the
 * length field and `QUIT` has no body. Pure codec.
 */

import { ChunkBuffer } from '../../protocol/adb/chunk-buffer.ts';
import type { FileStat } from '../types.ts';

export const SYNC_DATA_MAX = 64 * 1024;
export const SYNC_PATH_MAX = 1024;

export type SyncRequestId =
  | 'STAT'
  | 'STA2'
  | 'LST2'
  | 'LIST'
  | 'LIS2'
  | 'SEND'
  | 'RECV'
  | 'DATA'
  | 'DONE'
  | 'QUIT';
const REQUEST_IDS = new Set<string>([
  'STAT',
  'STA2',
  'LST2',
  'LIST',
  'LIS2',
  'SEND',
  'RECV',
  'DATA',
  'DONE',
  'QUIT',
]);

export interface SyncRequest {
  id: SyncRequestId;
  /** The length field: body length, or the mtime for `DONE`. */
  arg: number;
  body: Buffer;
}

export class SyncProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SyncProtocolError';
  }
}

const EMPTY = Buffer.alloc(0);

/** Incremental request decoder; bodies are views of the pushed bytes when they arrive in one piece. */
export class SyncRequestDecoder {
  readonly #bytes = new ChunkBuffer();
  #header: { id: SyncRequestId; arg: number; bodyLength: number } | undefined;

  push(bytes: Uint8Array): SyncRequest[] {
    if (bytes.length > 0) {
      this.#bytes.append(bytes);
    }
    const out: SyncRequest[] = [];
    for (;;) {
      if (this.#header === undefined) {
        if (this.#bytes.length < 8) break;
        const h = this.#bytes.take(8);
        const id = h.toString('latin1', 0, 4);
        const arg = h.readUInt32LE(4);
        if (!REQUEST_IDS.has(id)) throw new SyncProtocolError(`unknown sync request ${JSON.stringify(id)}`);
        const syncId = id as SyncRequestId;
        const bodyLength = syncId === 'DONE' || syncId === 'QUIT' ? 0 : arg;
        if (syncId === 'DATA' && bodyLength > SYNC_DATA_MAX) {
          throw new SyncProtocolError(`sync DATA of ${bodyLength} bytes exceeds ${SYNC_DATA_MAX}`);
        }
        if (syncId !== 'DATA' && bodyLength > SYNC_PATH_MAX) {
          throw new SyncProtocolError(`sync ${syncId} path of ${bodyLength} bytes exceeds ${SYNC_PATH_MAX}`);
        }
        this.#header = { id: syncId, arg, bodyLength };
      }
      const header = this.#header;
      if (this.#bytes.length < header.bodyLength) break;
      const body = header.bodyLength === 0 ? EMPTY : this.#bytes.take(header.bodyLength);
      this.#header = undefined;
      out.push({ id: header.id, arg: header.arg, body });
    }
    return out;
  }
}

/** Encode a request (what the host sends); used by tests and tools. */
export function encodeSyncRequest(id: SyncRequestId, body: Uint8Array | number = EMPTY): Buffer {
  const header = Buffer.allocUnsafe(8);
  header.write(id, 0, 'latin1');
  if (typeof body === 'number') {
    header.writeUInt32LE(body >>> 0, 4);
    return header;
  }
  header.writeUInt32LE(body.length, 4);
  return Buffer.concat([header, body]);
}

/** `ID` + u32: `OKAY 0`, the `DATA` header, `DONE 0`. */
export function encodeSyncHeader(id: string, value: number): Buffer {
  const out = Buffer.allocUnsafe(8);
  out.write(id, 0, 'latin1');
  out.writeUInt32LE(value >>> 0, 4);
  return out;
}

export function encodeSyncFail(message: string): Buffer {
  const text = Buffer.from(message, 'utf8');
  return Buffer.concat([encodeSyncHeader('FAIL', text.length), text]);
}

/** v1 `STAT` reply: mode, size, mtime (all zero when the path does not exist). */
export function encodeStatV1(stat: FileStat | undefined): Buffer {
  const out = Buffer.alloc(16);
  out.write('STAT', 0, 'latin1');
  if (stat) {
    out.writeUInt32LE(stat.mode >>> 0, 4);
    out.writeUInt32LE(Math.min(stat.size, 0xffffffff), 8);
    out.writeUInt32LE(stat.mtimeSec >>> 0, 12);
  }
  return out;
}

export interface StatDetails {
  uid: number;
  gid: number;
  ino: number;
}

const ENOENT = 2;

function writeStatV2Body(
  out: Buffer,
  offset: number,
  stat: FileStat | undefined,
  details: StatDetails,
): void {
  if (!stat) {
    out.writeUInt32LE(ENOENT, offset);
    return;
  }
  out.writeUInt32LE(0, offset); // error
  out.writeBigUInt64LE(0xfd00n, offset + 4); // dev
  out.writeBigUInt64LE(BigInt(details.ino), offset + 12); // ino
  out.writeUInt32LE(stat.mode >>> 0, offset + 20);
  out.writeUInt32LE(stat.type === 'dir' ? 2 : 1, offset + 24); // nlink
  out.writeUInt32LE(details.uid, offset + 28);
  out.writeUInt32LE(details.gid, offset + 32);
  out.writeBigUInt64LE(BigInt(stat.size), offset + 36);
  const mtime = BigInt(stat.mtimeSec);
  out.writeBigInt64LE(mtime, offset + 44); // atime
  out.writeBigInt64LE(mtime, offset + 52); // mtime
  out.writeBigInt64LE(mtime, offset + 60); // ctime
}

/** `STA2`/`LST2` reply (72 bytes): errno ENOENT and zeros when the path does not exist. */
export function encodeStatV2(id: 'STA2' | 'LST2', stat: FileStat | undefined, details: StatDetails): Buffer {
  const out = Buffer.alloc(72);
  out.write(id, 0, 'latin1');
  writeStatV2Body(out, 4, stat, details);
  return out;
}

/** One v1 `LIST` entry: `DENT` mode size mtime namelen name. */
export function encodeDent(name: string, stat: FileStat): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  const out = Buffer.alloc(20 + nameBytes.length);
  out.write('DENT', 0, 'latin1');
  out.writeUInt32LE(stat.mode >>> 0, 4);
  out.writeUInt32LE(Math.min(stat.size, 0xffffffff), 8);
  out.writeUInt32LE(stat.mtimeSec >>> 0, 12);
  out.writeUInt32LE(nameBytes.length, 16);
  nameBytes.copy(out, 20);
  return out;
}

/** One `LIS2` entry: `DNT2` + the stat v2 fields + namelen + name. */
export function encodeDentV2(name: string, stat: FileStat, details: StatDetails): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  const out = Buffer.alloc(76 + nameBytes.length);
  out.write('DNT2', 0, 'latin1');
  writeStatV2Body(out, 4, stat, details);
  out.writeUInt32LE(nameBytes.length, 72);
  nameBytes.copy(out, 76);
  return out;
}

/** The `DONE` that ends a listing: the id followed by a zeroed dent of the same version. */
export function encodeListDone(v2: boolean): Buffer {
  const out = Buffer.alloc(v2 ? 76 : 20);
  out.write('DONE', 0, 'latin1');
  return out;
}

/** `SEND` spec `path,mode` (mode in decimal); without a comma the mode defaults to a 0644 file. */
export function parseSendSpec(spec: string): { path: string; mode: number } {
  const comma = spec.lastIndexOf(',');
  if (comma < 0) return { path: spec, mode: 0o100644 };
  const mode = Number.parseInt(spec.slice(comma + 1), 10);
  return { path: spec.slice(0, comma), mode: Number.isFinite(mode) ? mode : 0o100644 };
}
