/**
 * The one host:port parser (src/protocol/adb/endpoint.ts) and its zod schema, as used by `adb connect`,
 * `ADB_SERVER` and the tunnel policy. More cases: devices-endpoint-policy.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { EndpointPolicy } from '../../src/devices/endpoint-policy.ts';
import { BridgeError } from '../../src/errors.ts';
import { endpointSchema, parseEndpoint, parseIPv6 } from '../../src/protocol/adb/endpoint.ts';

const port = fc.integer({ min: 1, max: 65535 });

describe('parseEndpoint (shared)', () => {
  it('is the parser the tunnel policy uses: a malformed endpoint is refused with its message', async () => {
    const policy = new EndpointPolicy();
    for (const endpoint of ['127.0.0.1:05555', '127.1:5555', '[fe80::1%eth0]:5555', 'host:0', 'a..b:1']) {
      let expected: unknown;
      try {
        parseEndpoint(endpoint);
      } catch (err) {
        expected = err;
      }
      expect(expected).toBeInstanceOf(BridgeError);
      await expect(policy.check(endpoint)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: (expected as BridgeError).message,
      });
    }
  });

  it('property: IPv4 host:port round-trips to the same text', () => {
    fc.assert(
      fc.property(fc.ipV4(), port, (host, p) => {
        expect(parseEndpoint(`${host}:${p}`)).toEqual({
          host,
          port: p,
          kind: 'ipv4',
          endpoint: `${host}:${p}`,
        });
      }),
    );
  });

  it('property: [IPv6]:port parses to the same address, canonical form is a fixed point', () => {
    fc.assert(
      fc.property(fc.ipV6(), port, (host, p) => {
        const parsed = parseEndpoint(`[${host}]:${p}`);
        expect(parsed.kind).toBe('ipv6');
        expect(parsed.port).toBe(p);
        expect(parseIPv6(parsed.host)).toBe(parseIPv6(host));
        expect(parseEndpoint(parsed.endpoint)).toEqual(parsed);
      }),
    );
  });

  it('property: host names parse lower-cased, and only with a port in range', () => {
    const name = fc.domain().filter((d) => !/^\d+$/.test(d.split('.').at(-1) ?? ''));
    fc.assert(
      fc.property(name, fc.integer({ min: -10, max: 70_000 }), (host, p) => {
        const text = `${host.toUpperCase()}:${p}`;
        if (p >= 1 && p <= 65535) {
          expect(parseEndpoint(text)).toEqual({ host, port: p, kind: 'dns', endpoint: `${host}:${p}` });
        } else {
          expect(() => parseEndpoint(text)).toThrow(BridgeError);
        }
      }),
    );
  });

  it('property: the zod schema accepts exactly what the parser accepts, canonicalised', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 30 }),
          fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 70_000 })).map(([h, p]) => `${h}:${p}`),
          fc.tuple(fc.ipV6(), port).map(([h, p]) => `[${h}]:${p}`),
        ),
        (text) => {
          let expected: string | undefined;
          try {
            expected = parseEndpoint(text).endpoint;
          } catch (err) {
            expect(err).toBeInstanceOf(BridgeError);
          }
          const result = endpointSchema.safeParse(text);
          expect(result.success).toBe(expected !== undefined);
          if (result.success) expect(result.data).toBe(expected);
        },
      ),
    );
  });
});

describe('ADB_SERVER uses the shared rule', () => {
  it('accepts host:port forms (IPv6 in brackets) and refuses the rest naming the variable', () => {
    expect(loadConfig({ ADB_SERVER: 'adb.farm.example:5037' }).adbServer).toBe('adb.farm.example:5037');
    expect(loadConfig({ ADB_SERVER: '[::1]:5037' }).adbServer).toBe('[::1]:5037');
    expect(() => loadConfig({ ADB_SERVER: '127.0.0.1' })).toThrow(/ADB_SERVER/);
    expect(() => loadConfig({ ADB_SERVER: '127.0.0.1:70000' })).toThrow(/ADB_SERVER/);
  });
});
