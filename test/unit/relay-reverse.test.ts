/** The reverse request parser and the tcp:0 answer reader (outside input: the client's service name). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseReverseService, resolvedPort } from '../../src/adb/relay-reverse.ts';
import { encodeFailure, encodeLengthPrefixed, tcpSpecPort } from '../../src/protocol/adb/host-protocol.ts';

describe('parseReverseService', () => {
  it('reads what adb reverse sends', () => {
    expect(parseReverseService('reverse:forward:tcp:8081;tcp:9000')).toEqual({
      kind: 'forward',
      norebind: false,
      local: 8081,
      remote: 9000,
    });
    expect(parseReverseService('reverse:forward:norebind:tcp:0;tcp:1')).toEqual({
      kind: 'forward',
      norebind: true,
      local: 0,
      remote: 1,
    });
    expect(parseReverseService('reverse:list-forward')).toEqual({ kind: 'list' });
    expect(parseReverseService('reverse:killforward-all')).toEqual({ kind: 'kill-all' });
    expect(parseReverseService('reverse:killforward:tcp:8081')).toEqual({ kind: 'kill', local: 8081 });
  });

  it('refuses non-tcp specs, port 0 or out of range on the client side, and junk, naming the problem', () => {
    const refused = (s: string) => {
      const r = parseReverseService(s);
      expect(r.kind).toBe('refused');
      return r.kind === 'refused' ? r.message : '';
    };
    expect(refused('reverse:forward:localabstract:foo;tcp:1')).toMatch(
      /tcp: specs only.*"localabstract:foo"/,
    );
    expect(refused('reverse:forward:tcp:1;localabstract:x')).toMatch(/your side "localabstract:x"/);
    expect(refused('reverse:forward:tcp:1;tcp:0')).toMatch(/your side "tcp:0"/);
    expect(refused('reverse:forward:tcp:65536;tcp:1')).toMatch(/device side/);
    expect(refused('reverse:forward:tcp:1')).toMatch(/malformed/);
    expect(refused('reverse:killforward:jdwp:1')).toMatch(/tcp: specs only/);
    expect(refused('reverse:reboot')).toMatch(/unknown reverse request/);
    expect(refused(`reverse:forward:${'a'.repeat(5000)};tcp:1`).length).toBeLessThan(200);
  });

  it('never throws; a forward it accepts names ports in range and round-trips', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (tail) => {
        const r = parseReverseService(`reverse:${tail}`);
        if (r.kind === 'forward') {
          expect(r.local).toBeGreaterThanOrEqual(0);
          expect(r.local).toBeLessThanOrEqual(65535);
          expect(r.remote).toBeGreaterThanOrEqual(1);
          expect(r.remote).toBeLessThanOrEqual(65535);
        }
        if (r.kind === 'refused') expect(r.message.length).toBeLessThan(300);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 65535 }),
        fc.integer({ min: 1, max: 65535 }),
        fc.boolean(),
        (local, remote, norebind) => {
          const service = `reverse:forward:${norebind ? 'norebind:' : ''}tcp:${local};tcp:${remote}`;
          expect(parseReverseService(service)).toEqual({ kind: 'forward', norebind, local, remote });
        },
      ),
    );
  });
});

describe('resolvedPort', () => {
  it('reads adbd’s OKAY + port answer and nothing else', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 65535 }), (port) => {
        expect(resolvedPort(Buffer.concat([Buffer.from('OKAY'), encodeLengthPrefixed(String(port))]))).toBe(
          port,
        );
      }),
    );
    expect(resolvedPort(Buffer.from('OKAY'))).toBeUndefined();
    expect(resolvedPort(encodeFailure('12'))).toBeUndefined();
    expect(resolvedPort(Buffer.concat([Buffer.from('OKAY'), encodeLengthPrefixed('0')]))).toBeUndefined();
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 32 }), (bytes) => {
        const port = resolvedPort(Buffer.from(bytes));
        if (port !== undefined) expect(port >= 1 && port <= 65535).toBe(true);
      }),
    );
  });

  it('encodeLengthPrefixed and encodeFailure frame by byte length; a failure never throws', () => {
    expect(encodeFailure('é').toString('utf8')).toBe('FAIL0002é');
    const long = encodeFailure('x'.repeat(70_000));
    expect(long.subarray(0, 8).toString()).toBe('FAILffff');
    expect(long.length).toBe(8 + 0xffff);
  });

  it('tcpSpecPort reads tcp:N within [min, 65535] and nothing else', () => {
    expect(tcpSpecPort('tcp:0')).toBe(0);
    expect(tcpSpecPort('tcp:0', 1)).toBeUndefined();
    expect(tcpSpecPort('tcp:65535')).toBe(65535);
    expect(tcpSpecPort('tcp:65536')).toBeUndefined();
    expect(tcpSpecPort('tcp:123456')).toBeUndefined();
    expect(tcpSpecPort('localabstract:x')).toBeUndefined();
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 70_000 }), (junk, n) => {
        const port = tcpSpecPort(junk);
        if (port !== undefined) expect(junk).toBe(`tcp:${junk.slice(4)}`);
        expect(tcpSpecPort(`tcp:${n}`)).toBe(n <= 65535 ? n : undefined);
      }),
    );
  });
});
