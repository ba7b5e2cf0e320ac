/**
 * adb's host protocol against golden bytes written from AOSP's OVERVIEW.TXT / SERVICES.TXT (not
 * produced by our encoder), plus properties over arbitrary payloads and arbitrary chunking.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapAdbError } from '../../src/adb/errors.ts';
import {
  AdbFailError,
  AdbProtocolError,
  adbFailureCode,
  diffDeviceLists,
  encodeHex4,
  encodeHostRequest,
  encodeLengthPrefixed,
  HostReplyReader,
  isConnectedMessage,
  isDisconnectedMessage,
  parseDeviceList,
  parseForwardList,
  parseForwardResult,
  parseVersion,
} from '../../src/protocol/adb/host-protocol.ts';

const ascii = (s: string) => Buffer.from(s, 'latin1');

describe('host requests (golden bytes)', () => {
  it('prefixes the service with its byte length in 4 lower-case hex digits', () => {
    // OVERVIEW.TXT: "000Chost:version" (case of the hex digits is free; adb itself writes lower case).
    expect(encodeHostRequest('host:version')).toEqual(ascii('000chost:version'));
    expect(encodeHostRequest('host:kill')).toEqual(ascii('0009host:kill'));
    expect(encodeHostRequest('host:transport:emulator-5554')).toEqual(
      ascii('001chost:transport:emulator-5554'),
    );
    expect(encodeHostRequest('shell,v2,raw:echo hi')).toEqual(ascii('0014shell,v2,raw:echo hi'));
    expect(encodeHostRequest('')).toEqual(ascii('0000'));
  });

  it('counts bytes, not characters', () => {
    // "é" is two bytes in UTF-8.
    expect(encodeHostRequest('shell:é')).toEqual(
      Buffer.from([0x30, 0x30, 0x30, 0x38, ...Buffer.from('shell:é')]),
    );
  });

  it('refuses payloads longer than 0xffff bytes', () => {
    expect(encodeLengthPrefixed(Buffer.alloc(0xffff)).length).toBe(0xffff + 4);
    expect(() => encodeHostRequest('x'.repeat(0x10000))).toThrow(/too long/);
    expect(() => encodeHex4(0x10000)).toThrow(RangeError);
    expect(() => encodeHex4(-1)).toThrow(RangeError);
  });
});

describe('HostReplyReader (golden bytes)', () => {
  it('reads OKAY and a length-prefixed value (host:version of adb 1.0.41)', () => {
    const r = new HostReplyReader();
    r.push(ascii('OKAY00040029'));
    expect(r.readStatus()).toBe('OKAY');
    expect(parseVersion(r.readString()!)).toBe(41);
    expect(r.buffered).toBe(0);
  });

  it('turns FAIL + length-prefixed message into AdbFailError', () => {
    const r = new HostReplyReader();
    r.push(ascii("FAIL0014device 'x' not found"));
    let caught: unknown;
    try {
      r.readStatus();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AdbFailError);
    expect((caught as AdbFailError).adbMessage).toBe("device 'x' not found");
    expect((caught as AdbFailError).message).toBe("Failure: 'device 'x' not found'");
  });

  it('waits for a FAIL message that is still arriving, and keeps what arrived at the end', () => {
    const r = new HostReplyReader();
    r.push(ascii('FAIL000edevice'));
    expect(r.readStatus()).toBeUndefined();
    expect(r.failAtEnd()?.adbMessage).toBe('device');
    r.push(ascii(' offline'));
    expect(() => r.readStatus()).toThrow(/device offline/);
  });

  it('refuses bytes that are neither OKAY nor FAIL, and bad hex lengths', () => {
    const r = new HostReplyReader();
    r.push(ascii('HTTP/1.1 400'));
    expect(() => r.readStatus()).toThrow(AdbProtocolError);
    const s = new HostReplyReader();
    s.push(ascii('zz12abc'));
    expect(() => s.readString()).toThrow(AdbProtocolError);
  });

  it('reads a forward reply: OKAY OKAY then the bound port', () => {
    const r = new HostReplyReader();
    r.push(ascii('OKAYOKAY000540123'));
    expect(r.readStatus()).toBe('OKAY');
    expect(r.readStatus()).toBe('OKAY');
    expect(r.readString()?.toString()).toBe('40123');
  });

  it('leaves the bytes after OKAY for the stream (takeRest)', () => {
    const r = new HostReplyReader();
    r.push(Buffer.concat([ascii('OKAY'), Buffer.from([1, 2, 0, 0, 0, 104, 105])]));
    expect(r.readStatus()).toBe('OKAY');
    expect([...r.takeRest()]).toEqual([1, 2, 0, 0, 0, 104, 105]);
  });
});

describe('host protocol properties', () => {
  it('encode/decode round trip for any payload', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (payload) => {
        const r = new HostReplyReader();
        r.push(encodeLengthPrefixed(payload));
        expect([...(r.readString() ?? [])]).toEqual([...payload]);
        expect(r.buffered).toBe(0);
      }),
    );
  });

  it('any split of a reply stream reads the same statuses and strings', () => {
    const item = fc.oneof(
      fc.constant<{ kind: 'okay' }>({ kind: 'okay' }),
      fc.record({ kind: fc.constant<'string'>('string'), value: fc.string({ maxLength: 200 }) }),
    );
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 10 }),
        fc.array(fc.nat(3000), { maxLength: 20 }),
        (items, cuts) => {
          const stream = Buffer.concat(
            items.map((i) => (i.kind === 'okay' ? ascii('OKAY') : encodeLengthPrefixed(i.value))),
          );
          const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
          const r = new HostReplyReader();
          const out: unknown[] = [];
          let next = 0;
          let prev = 0;
          for (const p of [...points, stream.length]) {
            r.push(stream.subarray(prev, p));
            prev = p;
            for (;;) {
              const want = items[next];
              if (!want) break;
              const got = want.kind === 'okay' ? r.readStatus() : r.readString()?.toString('utf8');
              if (got === undefined) break;
              out.push(want.kind === 'okay' ? { kind: 'okay' } : { kind: 'string', value: got });
              next += 1;
            }
          }
          expect(out).toEqual(items);
          expect(r.buffered).toBe(0);
        },
      ),
    );
  });

  it('a reader never throws anything but the two protocol errors', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const r = new HostReplyReader();
        r.push(bytes);
        for (const read of [() => r.readStatus(), () => r.readString()]) {
          try {
            read();
          } catch (err) {
            expect(err instanceof AdbFailError || err instanceof AdbProtocolError).toBe(true);
          }
        }
      }),
    );
  });
});

describe('service replies', () => {
  it('parses host:devices lines (SERIAL<TAB>STATE)', () => {
    expect(parseDeviceList('emulator-5554\tdevice\n127.0.0.1:5555\toffline\nR58M\tunauthorized\n')).toEqual([
      { serial: 'emulator-5554', state: 'device' },
      { serial: '127.0.0.1:5555', state: 'offline' },
      { serial: 'R58M', state: 'unauthorized' },
    ]);
    expect(parseDeviceList('')).toEqual([]);
  });

  it('property: a formatted device list parses back', () => {
    const serial = fc.stringMatching(/^[A-Za-z0-9.:_[\]-]{1,30}$/);
    const state = fc.constantFrom('device', 'offline', 'unauthorized', 'connecting', 'authorizing');
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ serial, state }), { selector: (d) => d.serial, maxLength: 8 }),
        (list) => {
          expect(parseDeviceList(list.map((d) => `${d.serial}\t${d.state}\n`).join(''))).toEqual(list);
        },
      ),
    );
  });

  it('diffs device lists like a tracker: added, changed, removed', () => {
    expect(
      diffDeviceLists(
        [
          { serial: 'a', state: 'device' },
          { serial: 'b', state: 'offline' },
          { serial: 'c', state: 'device' },
        ],
        [
          { serial: 'b', state: 'device' },
          { serial: 'c', state: 'device' },
          { serial: 'd', state: 'unauthorized' },
        ],
      ),
    ).toEqual([
      { serial: 'b', state: 'device' },
      { serial: 'd', state: 'unauthorized' },
      { serial: 'a', state: 'absent' },
    ]);
  });

  it('property: applying a diff to the old list gives the new one', () => {
    const list = fc.uniqueArray(
      fc.record({
        serial: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
        state: fc.constantFrom('device', 'offline'),
      }),
      { selector: (d) => d.serial },
    );
    fc.assert(
      fc.property(list, list, (before, after) => {
        const state = new Map<string, string>(before.map((d) => [d.serial, d.state]));
        for (const c of diffDeviceLists(before, after)) {
          if (c.state === 'absent') state.delete(c.serial);
          else state.set(c.serial, c.state);
        }
        expect(state).toEqual(new Map<string, string>(after.map((d) => [d.serial, d.state])));
      }),
    );
  });

  it('parses host:list-forward lines', () => {
    expect(parseForwardList('emulator-5554 tcp:4000 localabstract:x\nR58M tcp:4001 tcp:8080\n')).toEqual([
      { serial: 'emulator-5554', local: 'tcp:4000', remote: 'localabstract:x' },
      { serial: 'R58M', local: 'tcp:4001', remote: 'tcp:8080' },
    ]);
  });

  it('reads host:connect / host:disconnect messages', () => {
    expect(isConnectedMessage('connected to 127.0.0.1:5555')).toBe(true);
    expect(isConnectedMessage('already connected to 127.0.0.1:5555')).toBe(true);
    expect(isConnectedMessage('failed to connect to 127.0.0.1:5555')).toBe(false);
    expect(isConnectedMessage('failed to authenticate to 127.0.0.1:5555')).toBe(false);
    expect(isDisconnectedMessage('')).toBe(true);
    expect(isDisconnectedMessage('disconnected 127.0.0.1:5555')).toBe(true);
    expect(isDisconnectedMessage("no such device '127.0.0.1:5555'")).toBe(false);
  });
});

describe('adb messages → error codes', () => {
  it.each([
    ["device 'R58M' not found", 'DEVICE_OFFLINE'],
    ['device offline', 'DEVICE_OFFLINE'],
    ['device still connecting', 'DEVICE_OFFLINE'],
    ['closed', 'DEVICE_OFFLINE'],
    ['no devices/emulators found', 'DEVICE_OFFLINE'],
    ['device unauthorized.\nThis adb server', 'UNAUTHORIZED_DEVICE'],
    ['device still authorizing', 'UNAUTHORIZED_DEVICE'],
    ['failed to authenticate to 127.0.0.1:5555', 'UNAUTHORIZED_DEVICE'],
    ['more than one device/emulator', 'INTERNAL'],
    ['connect ECONNREFUSED 127.0.0.1:5137', 'UNAVAILABLE'],
    ['unknown host service', 'INTERNAL'],
  ] as const)('%j → %s', (message, code) => {
    expect(adbFailureCode(message).code).toBe(code);
    expect(mapAdbError(new AdbFailError(message), { operation: 'shell', serial: 's' }).code).toBe(code);
  });

  it('keeps adb’s message in the details', () => {
    const e = mapAdbError(new AdbFailError('device offline'), { operation: 'shell', serial: 's' });
    expect(e.details).toMatchObject({
      operation: 'shell',
      serial: 's',
      adbMessage: "Failure: 'device offline'",
    });
    expect(e.retryable).toBe(true);
  });
});

describe('parseForwardResult', () => {
  it('reads the optional second OKAY and the bound port', () => {
    expect(parseForwardResult(ascii('OKAY000540123'))).toBe('40123');
    expect(parseForwardResult(ascii('000540123'))).toBe('40123');
    expect(parseForwardResult(ascii('OKAY'))).toBeUndefined();
    expect(parseForwardResult(ascii(''))).toBeUndefined();
  });

  it('turns a FAIL after the transport OKAY into AdbFailError', () => {
    expect(() => parseForwardResult(ascii('FAIL002ccannot bind listener: Address already in use'))).toThrow(
      /cannot bind listener/,
    );
    expect(() => parseForwardResult(ascii('FAIL0020listener'))).toThrow(AdbFailError);
  });
});
