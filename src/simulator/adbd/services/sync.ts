/**
 * `sync:` service against the device's `SimFileSystem`: STAT, STA2/LST2, LIST/LIS2, SEND
 * (DATA chunks, DONE with the mtime → OKAY or FAIL), RECV (DATA chunks then DONE, or FAIL) and QUIT.
 * Requests are answered in order as they arrive; a malformed request closes the stream like adbd.
 */
import { createHash } from 'node:crypto';
import type { FileStat, SimFileSystem } from '../../types.ts';
import type { AdbStream } from '../stream.ts';
import {
  encodeDent,
  encodeDentV2,
  encodeListDone,
  encodeStatV1,
  encodeStatV2,
  encodeSyncFail,
  encodeSyncHeader,
  parseSendSpec,
  type StatDetails,
  SYNC_DATA_MAX,
  type SyncRequest,
  SyncRequestDecoder,
} from '../sync-protocol.ts';

const SHELL_UID = 2000;

function statDetails(path: string): StatDetails {
  const owned =
    path.startsWith('/data/local/tmp') || path.startsWith('/sdcard') || path.startsWith('/storage');
  const ino = createHash('sha1').update(path).digest().readUInt32LE(0);
  return { uid: owned ? SHELL_UID : 0, gid: owned ? SHELL_UID : 0, ino };
}

function joinPath(dir: string, name: string): string {
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

interface PendingSend {
  path: string;
  mode: number;
  chunks: Buffer[];
  size: number;
}

export function startSync(fs: SimFileSystem, stream: AdbStream): void {
  const decoder = new SyncRequestDecoder();
  let send: PendingSend | undefined;

  const handle = (req: SyncRequest): boolean => {
    if (send !== undefined) {
      if (req.id === 'DATA') {
        // Keep the views; DONE assembles them with one copy.
        send.chunks.push(req.body);
        send.size += req.body.length;
        return true;
      }
      if (req.id === 'DONE') {
        const data = send.chunks.length === 1 ? send.chunks[0]! : Buffer.concat(send.chunks, send.size);
        const { path, mode } = send;
        send = undefined;
        try {
          const slash = path.lastIndexOf('/');
          if (slash > 0) fs.mkdirp(path.slice(0, slash)); // fixed_push_mkdir
          fs.writeFile(path, data, { mode, mtimeSec: req.arg });
          stream.write(encodeSyncHeader('OKAY', 0));
        } catch (err) {
          stream.write(encodeSyncFail(`couldn't create file: ${errorMessage(err)}`));
        }
        return true;
      }
      stream.write(encodeSyncFail(`invalid data message: expected DATA or DONE, got ${req.id}`));
      return false;
    }
    const path = req.body.toString('utf8');
    switch (req.id) {
      case 'STAT':
        stream.write(encodeStatV1(fs.stat(path)));
        return true;
      case 'STA2':
      case 'LST2':
        stream.write(encodeStatV2(req.id, fs.stat(path), statDetails(path)));
        return true;
      case 'LIST':
      case 'LIS2': {
        const v2 = req.id === 'LIS2';
        const self = fs.stat(path);
        const entries = fs.list(path);
        if (self?.type === 'dir' && entries !== undefined) {
          const parent = fs.stat(path.replace(/\/[^/]*\/?$/, '') || '/') ?? self;
          const all: Array<{ name: string; stat: FileStat }> = [
            { name: '.', stat: self },
            { name: '..', stat: parent },
            ...entries,
          ];
          for (const entry of all) {
            stream.write(
              v2
                ? encodeDentV2(entry.name, entry.stat, statDetails(joinPath(path, entry.name)))
                : encodeDent(entry.name, entry.stat),
            );
          }
        }
        stream.write(encodeListDone(v2));
        return true;
      }
      case 'SEND': {
        const spec = parseSendSpec(path);
        send = { path: spec.path, mode: spec.mode, chunks: [], size: 0 };
        return true;
      }
      case 'RECV': {
        const stat = fs.stat(path);
        const data = stat?.type === 'file' ? fs.readFile(path) : undefined;
        if (data === undefined) {
          const why = stat === undefined ? 'No such file or directory' : 'Is a directory';
          stream.write(encodeSyncFail(`open failed: ${why}`));
          return true;
        }
        for (let offset = 0; offset < data.length; offset += SYNC_DATA_MAX) {
          const part = data.subarray(offset, offset + SYNC_DATA_MAX);
          stream.write(encodeSyncHeader('DATA', part.length));
          stream.write(part);
        }
        stream.write(encodeSyncHeader('DONE', 0));
        return true;
      }
      case 'QUIT':
        return false;
      default:
        stream.write(encodeSyncFail(`unexpected sync request ${req.id}`));
        return false;
    }
  };

  stream.setReceiver((data) => {
    let requests: SyncRequest[];
    try {
      requests = decoder.push(data);
    } catch (err) {
      stream.write(encodeSyncFail(errorMessage(err)));
      stream.close();
      return;
    }
    for (const req of requests) {
      if (!handle(req)) {
        stream.close();
        return;
      }
    }
  });
}
