/**
 * The host side of adb's sync push against golden bytes written from AOSP SYNC.TXT /
 * file_sync_protocol.h (id, u32 LE argument, body; DATA ≤ 64 KiB; DONE carries the mtime; the
 * answer is OKAY+0 or FAIL+length+message), and against the simulator's independent decoder.
 */
import { duplexPair, Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pushOver } from '../../src/adb/sync-push.ts';
import { AdbFailError } from '../../src/protocol/adb/host-protocol.ts';
import {
  encodeSyncData,
  encodeSyncDone,
  encodeSyncQuit,
  encodeSyncSend,
  SyncPushReplyReader,
} from '../../src/protocol/adb/sync-protocol.ts';
import { SyncRequestDecoder } from '../../src/simulator/adbd/sync-protocol.ts';

const ascii = (s: string) => Buffer.from(s, 'latin1');
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};

describe('sync push requests (golden bytes)', () => {
  it('SEND carries "PATH,MODE" with the regular-file bit (0644 → 33188)', () => {
    expect(encodeSyncSend('/data/local/tmp/a.apk', 0o644)).toEqual(
      Buffer.concat([ascii('SEND'), Buffer.from([0x1b, 0, 0, 0]), ascii('/data/local/tmp/a.apk,33188')]),
    );
  });

  it('DATA chunks of at most 64 KiB', () => {
    expect(encodeSyncData(ascii('hi'))).toEqual([
      Buffer.concat([ascii('DATA'), Buffer.from([2, 0, 0, 0]), ascii('hi')]),
    ]);
    const big = encodeSyncData(Buffer.alloc(65536 + 1, 7));
    expect(big.map((b) => b.length)).toEqual([8 + 65536, 8 + 1]);
    expect(big[0]!.subarray(0, 8)).toEqual(Buffer.concat([ascii('DATA'), Buffer.from([0, 0, 1, 0])]));
    expect(encodeSyncData(Buffer.alloc(0))).toEqual([]);
  });

  it('DONE carries the mtime in its argument, QUIT nothing', () => {
    expect(encodeSyncDone(0x5f5e1000)).toEqual(
      Buffer.concat([ascii('DONE'), Buffer.from([0x00, 0x10, 0x5e, 0x5f])]),
    );
    expect(encodeSyncQuit()).toEqual(Buffer.concat([ascii('QUIT'), Buffer.from([0, 0, 0, 0])]));
  });
});

describe('sync push reply', () => {
  it('OKAY + 0 completes; FAIL + message throws it; bytes may arrive in any split', () => {
    const ok = new SyncPushReplyReader();
    expect(ok.push(ascii('OKA'))).toBeUndefined();
    expect(ok.push(Buffer.concat([ascii('Y'), u32(0)]))).toBe('OKAY');
    const fail = new SyncPushReplyReader();
    const message = "couldn't create file: Read-only file system";
    expect(
      fail.push(Buffer.concat([ascii('FAIL'), u32(message.length), ascii(message.slice(0, 5))])),
    ).toBeUndefined();
    expect(() => fail.push(ascii(message.slice(5)))).toThrow(AdbFailError);
    expect(() => new SyncPushReplyReader().push(ascii('DATA\0\0\0\0'))).toThrow(/expected OKAY or FAIL/);
  });
});

describe('pushOver', () => {
  it('property: the simulator decodes what we send as SEND, the data in order, DONE, QUIT', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 70_000 }), { maxLength: 4 }),
        fc.integer({ min: 0, max: 0o777 }),
        async (chunks, mode) => {
          const [host, device] = duplexPair();
          const decoder = new SyncRequestDecoder();
          const requests: Array<{ id: string; arg: number; body: Buffer }> = [];
          device.on('data', (d: Buffer) => {
            for (const r of decoder.push(d)) {
              requests.push({ id: r.id, arg: r.arg, body: Buffer.from(r.body) });
              if (r.id === 'DONE') device.write(Buffer.concat([ascii('OKAY'), u32(0)]));
            }
          });
          const progress: number[] = [];
          await pushOver(host, Readable.from(chunks.map((c) => Buffer.from(c))), '/x/y.bin', {
            mode,
            mtimeSec: 1234,
            onProgress: (n) => progress.push(n),
          });
          await new Promise((r) => setImmediate(r));
          const data = Buffer.concat(chunks.map((c) => Buffer.from(c)));
          expect(requests[0]).toEqual({
            id: 'SEND',
            arg: expect.any(Number),
            body: ascii(`/x/y.bin,${mode | 0o100000}`),
          });
          expect(Buffer.concat(requests.filter((r) => r.id === 'DATA').map((r) => r.body))).toEqual(data);
          expect(requests.filter((r) => r.id === 'DATA').every((r) => r.body.length <= 65536)).toBe(true);
          expect(requests.at(-2)).toMatchObject({ id: 'DONE', arg: 1234 });
          expect(requests.at(-1)).toMatchObject({ id: 'QUIT' });
          expect(progress.at(-1) ?? 0).toBe(data.length);
        },
      ),
      { numRuns: 30 },
    );
  });

  it("rejects with the device's FAIL, even before all data is sent", async () => {
    const [host, device] = duplexPair();
    device.once('data', () => {
      const message = "couldn't create file: Read-only file system";
      device.write(Buffer.concat([ascii('FAIL'), u32(message.length), ascii(message)]));
    });
    device.resume();
    const endless = new Readable({
      read() {
        this.push(Buffer.alloc(65536));
      },
    });
    await expect(pushOver(host, endless, '/system/x', { mode: 0o644 })).rejects.toThrow(
      /Read-only file system/,
    );
  });
});
