import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeShellPacket, ShellPacketDecoder } from '../../src/protocol/adb/shell-protocol.ts';
import {
  A_CLSE,
  A_CNXN,
  A_OKAY,
  A_OPEN,
  A_WRTE,
  type AdbMessage,
  dataChecksum,
  encodeMessage,
  HEADER_SIZE,
  MessageDecodeError,
  MessageDecoder,
} from '../../src/protocol/adb/transport-message.ts';
import { AdbStream, type StreamTransport } from '../../src/simulator/adbd/stream.ts';
import {
  encodeDentV2,
  encodeListDone,
  encodeStatV2,
  encodeSyncRequest,
  parseSendSpec,
  SyncProtocolError,
  SyncRequestDecoder,
} from '../../src/simulator/adbd/sync-protocol.ts';

const COMMANDS = [A_CNXN, A_OPEN, A_OKAY, A_WRTE, A_CLSE];

const messageArb: fc.Arbitrary<AdbMessage> = fc.record({
  command: fc.constantFrom(...COMMANDS),
  arg0: fc.nat({ max: 0xffffffff }),
  arg1: fc.nat({ max: 0xffffffff }),
  data: fc.uint8Array({ maxLength: 300 }),
});

/** Split `bytes` at the given cut points (sorted, deduplicated, inside the buffer). */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let last = 0;
  for (const p of points) {
    parts.push(bytes.subarray(last, p));
    last = p;
  }
  parts.push(bytes.subarray(last));
  return parts;
}

function normalize(
  messages: AdbMessage[],
): Array<{ command: number; arg0: number; arg1: number; data: string }> {
  return messages.map((m) => ({
    command: m.command,
    arg0: m.arg0,
    arg1: m.arg1,
    data: Buffer.from(m.data).toString('hex'),
  }));
}

describe('adb message codec', () => {
  it('decodes the same messages from any split of the byte stream, with or without checksums', () => {
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.boolean(),
        (messages, cuts, withChecksum) => {
          const stream = Buffer.concat(messages.map((m) => encodeMessage(m, withChecksum)));
          const decoder = new MessageDecoder();
          const out = split(stream, cuts).flatMap((part) => decoder.push(part));
          expect(normalize(out)).toEqual(normalize(messages));
          expect(decoder.buffered).toBe(0);
        },
      ),
    );
  });

  it('writes magic = command ^ 0xffffffff and data_check 0 unless asked for the checksum', () => {
    const data = Buffer.from('host::features=shell_v2');
    const modern = encodeMessage({ command: A_CNXN, arg0: 0x01000001, arg1: 1 << 20, data });
    expect(modern.readUInt32LE(16)).toBe(0);
    expect(modern.readUInt32LE(20)).toBe((A_CNXN ^ 0xffffffff) >>> 0);
    expect(modern.readUInt32LE(12)).toBe(data.length);
    const legacy = encodeMessage({ command: A_CNXN, arg0: 0x01000000, arg1: 4096, data }, true);
    expect(legacy.readUInt32LE(16)).toBe(dataChecksum(data));
  });

  it('rejects a bad magic with a typed error and stays failed', () => {
    const bytes = encodeMessage({ command: A_OPEN, arg0: 1, arg1: 0, data: Buffer.from('shell:\0') });
    bytes.writeUInt32LE(0x12345678, 20);
    const decoder = new MessageDecoder();
    expect(() => decoder.push(bytes)).toThrow(MessageDecodeError);
    let again: unknown;
    try {
      decoder.push(Buffer.alloc(0));
    } catch (err) {
      again = err;
    }
    expect((again as MessageDecodeError | undefined)?.code).toBe('BAD_MAGIC');
  });

  it('rejects a payload longer than maxPayload before buffering it', () => {
    const header = encodeMessage({ command: A_WRTE, arg0: 1, arg1: 1, data: Buffer.alloc(0) });
    header.writeUInt32LE(4097, 12);
    const decoder = new MessageDecoder({ maxPayload: 4096 });
    expect(() => decoder.push(header.subarray(0, HEADER_SIZE))).toThrow(/exceeds 4096/);
  });

  it('rejects a wrong non-zero checksum and accepts a zero one', () => {
    const data = Buffer.from('abc');
    const good = encodeMessage({ command: A_WRTE, arg0: 1, arg1: 2, data });
    expect(new MessageDecoder().push(good)).toHaveLength(1);
    const bad = encodeMessage({ command: A_WRTE, arg0: 1, arg1: 2, data }, true);
    bad.writeUInt32LE(dataChecksum(data) + 1, 16);
    expect(() => new MessageDecoder().push(bad)).toThrow(/checksum/);
  });
});

describe('shell protocol packets', () => {
  it('decode the same packets from any split', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ id: fc.integer({ min: 0, max: 5 }), data: fc.uint8Array({ maxLength: 64 }) }), {
          maxLength: 10,
        }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (packets, cuts) => {
          const bytes = Buffer.concat(packets.map((p) => encodeShellPacket(p.id, p.data)));
          const decoder = new ShellPacketDecoder();
          const out = split(bytes, cuts).flatMap((part) => decoder.push(part));
          expect(out.map((p) => [p.id, Buffer.from(p.data).toString('hex')])).toEqual(
            packets.map((p) => [p.id, Buffer.from(p.data).toString('hex')]),
          );
        },
      ),
    );
  });
});

describe('sync protocol', () => {
  it('decodes requests from any split, DONE carrying the mtime and no body', () => {
    const requestArb = fc.oneof(
      fc
        .record({
          id: fc.constantFrom('STAT', 'STA2', 'LST2', 'LIST', 'LIS2', 'SEND', 'RECV'),
          path: fc.string(),
        })
        .map(({ id, path }) => ({ id, arg: -1, body: Buffer.from(path, 'utf8') })),
      fc.uint8Array({ maxLength: 200 }).map((data) => ({ id: 'DATA', arg: -1, body: Buffer.from(data) })),
      fc.nat({ max: 0xffffffff }).map((mtime) => ({ id: 'DONE', arg: mtime, body: Buffer.alloc(0) })),
    );
    fc.assert(
      fc.property(
        fc.array(requestArb, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (reqs, cuts) => {
          const bytes = Buffer.concat(
            reqs.map((r) =>
              r.id === 'DONE' ? encodeSyncRequest('DONE', r.arg) : encodeSyncRequest(r.id as 'DATA', r.body),
            ),
          );
          const decoder = new SyncRequestDecoder();
          const out = split(bytes, cuts).flatMap((part) => decoder.push(part));
          expect(out.map((r) => [r.id, r.id === 'DONE' ? r.arg : r.body.toString('hex')])).toEqual(
            reqs.map((r) => [r.id, r.id === 'DONE' ? r.arg : r.body.toString('hex')]),
          );
        },
      ),
    );
  });

  it('refuses unknown ids and oversize DATA', () => {
    expect(() => new SyncRequestDecoder().push(Buffer.from('NOPE\0\0\0\0'))).toThrow(SyncProtocolError);
    const big = Buffer.alloc(8);
    big.write('DATA', 0, 'latin1');
    big.writeUInt32LE(64 * 1024 + 1, 4);
    expect(() => new SyncRequestDecoder().push(big)).toThrow(/exceeds/);
  });

  it('lays out stat v2 and dent v2 like file_sync_protocol.h', () => {
    const stat = { type: 'file' as const, size: 1234, mode: 0o100644, mtimeSec: 1_700_000_000 };
    const sta2 = encodeStatV2('STA2', stat, { uid: 2000, gid: 2000, ino: 7 });
    expect(sta2.length).toBe(72);
    expect(sta2.toString('latin1', 0, 4)).toBe('STA2');
    expect(sta2.readUInt32LE(4)).toBe(0);
    expect(sta2.readUInt32LE(24)).toBe(0o100644);
    expect(sta2.readBigUInt64LE(40)).toBe(1234n);
    expect(sta2.readBigInt64LE(56)).toBe(1_700_000_000n);
    expect(encodeStatV2('LST2', undefined, { uid: 0, gid: 0, ino: 0 }).readUInt32LE(4)).toBe(2); // ENOENT
    const dent = encodeDentV2('a.txt', stat, { uid: 2000, gid: 2000, ino: 7 });
    expect(dent.readUInt32LE(72)).toBe(5);
    expect(dent.toString('utf8', 76)).toBe('a.txt');
    expect(encodeListDone(true).length).toBe(76);
    expect(encodeListDone(false).length).toBe(20);
  });

  it('parses SEND specs with the mode after the last comma', () => {
    expect(parseSendSpec('/data/local/tmp/a,b.apk,33188')).toEqual({
      path: '/data/local/tmp/a,b.apk',
      mode: 33188,
    });
    expect(parseSendSpec('/x')).toEqual({ path: '/x', mode: 0o100644 });
  });
});

class FakeTransport implements StreamTransport {
  sent: AdbMessage[] = [];
  released: number[] = [];
  constructor(readonly maxData: number) {}
  send(command: number, arg0: number, arg1: number, data: Uint8Array = new Uint8Array()): void {
    this.sent.push({ command, arg0, arg1, data: Buffer.from(data) });
  }
  release(localId: number): void {
    this.released.push(localId);
  }
}

describe('stream flow control', () => {
  it('keeps one WRTE in flight, splits at maxdata and closes after the last OKAY', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 50 }), { maxLength: 10 }),
        fc.integer({ min: 1, max: 64 }),
        async (writes, maxData) => {
          const transport = new FakeTransport(maxData);
          const stream = new AdbStream(transport, 5, 9);
          for (const w of writes) stream.write(w);
          stream.close();
          await Promise.resolve(); // writes of one tick are coalesced and sent from a microtask
          const received: Buffer[] = [];
          for (let guard = 0; guard < 10_000; guard++) {
            const wrtes = transport.sent.filter((m) => m.command === A_WRTE);
            expect(wrtes.length).toBeLessThanOrEqual(received.length + 1);
            const next = wrtes[received.length];
            if (next === undefined) break;
            expect(next.data.length).toBeLessThanOrEqual(maxData);
            expect([next.arg0, next.arg1]).toEqual([5, 9]);
            received.push(Buffer.from(next.data));
            stream.handleOkay();
          }
          expect(Buffer.concat(received).toString('hex')).toBe(Buffer.concat(writes).toString('hex'));
          expect(transport.sent.at(-1)?.command).toBe(A_CLSE);
          expect(transport.released).toEqual([5]);
        },
      ),
    );
  });

  it('coalesces writes of one tick into a single WRTE', async () => {
    const transport = new FakeTransport(1024);
    const stream = new AdbStream(transport, 1, 2);
    stream.write(Buffer.from('head'));
    stream.write(Buffer.from('body'));
    stream.write(Buffer.from('tail'));
    await Promise.resolve();
    const wrtes = transport.sent.filter((m) => m.command === A_WRTE);
    expect(wrtes.map((m) => Buffer.from(m.data).toString())).toEqual(['headbodytail']);
  });

  it('holds the OKAY for a WRTE until the receiver is ready', async () => {
    const transport = new FakeTransport(100);
    const stream = new AdbStream(transport, 1, 2);
    let release: () => void = () => {};
    stream.setReceiver(() => new Promise<void>((resolve) => (release = resolve)));
    stream.handleWrite(Buffer.from('x'));
    await Promise.resolve();
    expect(transport.sent.filter((m) => m.command === A_OKAY)).toHaveLength(0);
    release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(transport.sent.filter((m) => m.command === A_OKAY)).toHaveLength(1);
  });
});
