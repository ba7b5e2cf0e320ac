/**
 * The client address behind trusted proxies: the range list of DEVICEBRIDGE_TRUSTED_PROXIES (strict,
 * errors naming the entry), address matching (checked against Node's BlockList) and the
 * X-Forwarded-For walk (a client never picks its own key through a trusted proxy).
 */
import { BlockList, isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressBytes, inRange, loadConfig, parseAddressRanges } from '../../src/config.ts';
import { clientAddressOf } from '../../src/server/client-address.ts';

const v4 = fc.ipV4();
const v6 = fc.ipV6();

describe('DEVICEBRIDGE_TRUSTED_PROXIES', () => {
  it('parses addresses and CIDR ranges, separated by commas or spaces', () => {
    expect(parseAddressRanges('').map((r) => r.text)).toEqual([]);
    expect(
      parseAddressRanges(' 10.0.0.0/8, 192.0.2.7 2001:DB8::/32,::1 , 0.0.0.0/0').map((r) => r.text),
    ).toEqual(['10.0.0.0/8', '192.0.2.7/32', '2001:db8::/32', '::1/128', '0.0.0.0/0']);
  });

  it('refuses a bad entry, naming it and the rule', () => {
    for (const [text, entry, rule] of [
      ['10.0.0.0/8, proxy.example', 'proxy.example', /an IP address or a CIDR range/],
      ['10.0.0.0/33', '10.0.0.0/33', /0 to 32/],
      ['2001:db8::/129', '2001:db8::/129', /0 to 128/],
      ['10.0.0.0/08', '10.0.0.0/08', /0 to 32/],
      ['10.0.0.0/', '10.0.0.0/', /0 to 32/],
      ['10.0.0.1/8', '10.0.0.1/8', /host bits are set under \/8 \(the range is 10\.0\.0\.0\/8\)/],
      ['2001:db8::1/32', '2001:db8::1/32', /the range is 2001:db8::\/32/],
      ['::ffff:10.0.0.1', '::ffff:10.0.0.1', /IPv4 address/],
      ['[::1]', '[::1]', /an IP address/],
      ['fe80::1%eth0', 'fe80::1%eth0', /an IP address/],
      ['10.0.0.1:8080', '10.0.0.1:8080', /an IP address/],
      ['10.0.0.0/8/8', '10.0.0.0/8/8', /0 to 32/],
    ] as const) {
      expect(() => parseAddressRanges(text), text).toThrow(`entry ${JSON.stringify(entry)}`);
      expect(() => parseAddressRanges(text), text).toThrow(rule);
    }
  });

  it('a bad value stops the configuration naming the variable and the entry', () => {
    expect(() => loadConfig({ DEVICEBRIDGE_TRUSTED_PROXIES: '10.0.0.0/8 10.1.2.3/16' })).toThrow(
      /DEVICEBRIDGE_TRUSTED_PROXIES: entry "10\.1\.2\.3\/16": host bits/,
    );
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(
      loadConfig({ DEVICEBRIDGE_TRUSTED_PROXIES: '10.0.0.0/8' }).trustedProxies.map((r) => r.text),
    ).toEqual(['10.0.0.0/8']);
  });

  it('never accepts what is not an address or a range (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        try {
          const ranges = parseAddressRanges(text);
          for (const entry of text.split(/[\s,]+/).filter((e) => e !== '')) {
            expect(isIP(entry.split('/')[0]!)).not.toBe(0);
          }
          for (const r of ranges) expect(parseAddressRanges(r.text)[0]!.text).toBe(r.text);
        } catch (err) {
          expect((err as Error).message).toMatch(/^entry "/);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('a range written back reads the same, and holds its own network address (property)', () => {
    fc.assert(
      fc.property(fc.oneof(v4, v6), fc.nat(128), (address, n) => {
        const bytes = addressBytes(address)!;
        const bits = bytes.length * 8;
        const prefix = n % (bits + 1);
        const written = parseAddressRanges(`${bytes.length === 4 ? bytes.join('.') : address}`)[0]!;
        expect(written.prefix).toBe(bits);
        expect(parseAddressRanges(written.text)).toEqual([written]);
        // Its network under `prefix` is a range that holds the address.
        const network = Uint8Array.from(
          bytes,
          (b, i) => b & ((0xff << (8 - Math.max(0, Math.min(8, prefix - 8 * i)))) & 0xff),
        );
        const [range] = parseAddressRanges(`${formatOf(network)}/${prefix}`);
        expect(inRange(bytes, range!)).toBe(true);
        expect(parseAddressRanges(range!.text)).toEqual([range]);
      }),
    );
  });
});

function formatOf(bytes: Uint8Array): string {
  if (bytes.length === 4) return bytes.join('.');
  return Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16)).join(
    ':',
  );
}

describe('address matching', () => {
  it('agrees with node:net BlockList for IPv4 and IPv6 (property)', () => {
    fc.assert(
      fc.property(fc.oneof(v4, v6), fc.oneof(v4, v6), fc.nat(128), (network, address, n) => {
        const family = isIP(network) === 4 ? 'ipv4' : 'ipv6';
        const netBytes = addressBytes(network)!;
        if ((family === 'ipv4') !== (netBytes.length === 4)) return;
        const prefix = n % (family === 'ipv4' ? 33 : 129);
        const list = new BlockList();
        list.addSubnet(network, prefix, family);
        const bytes = addressBytes(address)!;
        const range = { bytes: netBytes, prefix, text: '' };
        // An IPv4-mapped IPv6 address is its IPv4 address; an IPv4 address is in no IPv6 range
        // (BlockList would match it to ::/0 through its mapped form: the bridge never does).
        if (bytes.length !== netBytes.length) {
          expect(inRange(bytes, range)).toBe(false);
          return;
        }
        const expected =
          bytes.length === 4 ? list.check(bytes.join('.'), 'ipv4') : list.check(address, 'ipv6');
        expect(inRange(bytes, range), `${address} in ${network}/${prefix}`).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('reads IPv6 forms: compressed, full, embedded IPv4, IPv4-mapped', () => {
    expect(Array.from(addressBytes('::1')!)).toEqual([...new Array(15).fill(0), 1]);
    expect(addressBytes('0:0:0:0:0:0:0:1')).toEqual(addressBytes('::1'));
    expect(addressBytes('::ffff:192.0.2.7')).toEqual(Uint8Array.from([192, 0, 2, 7]));
    expect(addressBytes('::FFFF:c000:0207')).toEqual(Uint8Array.from([192, 0, 2, 7]));
    expect(Array.from(addressBytes('64:ff9b::192.0.2.7')!).slice(12)).toEqual([192, 0, 2, 7]);
    for (const bad of ['', 'localhost', '[::1]', '1.2.3', '::1%lo', '1.2.3.4:80'])
      expect(addressBytes(bad)).toBeNull();
  });
});

describe('X-Forwarded-For behind trusted proxies', () => {
  const proxies = parseAddressRanges('10.0.0.0/8, 2001:db8::/32');

  it('believes the chain only from a trusted peer, from its end, up to the first untrusted hop', () => {
    expect(clientAddressOf('192.0.2.1', '198.51.100.7', proxies)).toBe('192.0.2.1');
    expect(clientAddressOf('10.0.0.5', undefined, proxies)).toBe('10.0.0.5');
    expect(clientAddressOf('10.0.0.5', '198.51.100.7', proxies)).toBe('198.51.100.7');
    expect(clientAddressOf('::ffff:10.0.0.5', '198.51.100.7', proxies)).toBe('198.51.100.7');
    // A chain of proxies: each trusted hop passes on to the address it saw.
    expect(clientAddressOf('10.0.0.5', '198.51.100.7, 10.1.1.1', proxies)).toBe('198.51.100.7');
    expect(clientAddressOf('2001:db8::5', '198.51.100.7, 2001:db8::9', proxies)).toBe('198.51.100.7');
    // What the client wrote itself is left of what the first trusted proxy appended.
    expect(clientAddressOf('10.0.0.5', '1.1.1.1, 203.0.113.9', proxies)).toBe('203.0.113.9');
    // A hop that is not an address stops the walk at the proxy that passed it on.
    expect(clientAddressOf('10.0.0.5', 'unknown', proxies)).toBe('10.0.0.5');
    expect(clientAddressOf('10.0.0.5', '203.0.113.9, 198.51.100.7:4711', proxies)).toBe('10.0.0.5');
    // Every hop trusted: the first one.
    expect(clientAddressOf('10.0.0.5', '10.9.9.9, 10.1.1.1', proxies)).toBe('10.9.9.9');
    // No trusted proxies configured: the peer, whatever the header says.
    expect(clientAddressOf('10.0.0.5', '198.51.100.7', [])).toBe('10.0.0.5');
    expect(clientAddressOf('::ffff:127.0.0.1', undefined, [])).toBe('127.0.0.1');
  });

  it('a client behind a trusted proxy cannot choose its key by what it writes (property)', () => {
    const written = fc.array(fc.oneof(v4, v6, fc.string({ maxLength: 12 })), { maxLength: 6 });
    const client = v4.filter((a) => !a.startsWith('10.'));
    const chain = fc.array(fc.constantFrom('10.0.0.1', '10.200.3.4', '2001:db8::7'), {
      minLength: 1,
      maxLength: 4,
    });
    fc.assert(
      fc.property(written, client, chain, (forged, real, proxiesOnTheWay) => {
        // The client writes anything; the first proxy appends the client's address, each next
        // proxy the address of the one before; the last proxy is the peer.
        const header = [...forged, real, ...proxiesOnTheWay.slice(0, -1)].join(', ');
        expect(clientAddressOf(proxiesOnTheWay.at(-1)!, header, proxies)).toBe(real);
      }),
    );
    fc.assert(
      fc.property(fc.oneof(v4, v6), fc.string({ maxLength: 60 }), (peer, anything) => {
        // From a peer that is not trusted the header is ignored.
        const bytes = addressBytes(peer)!;
        if (proxies.some((r) => inRange(bytes, r))) return;
        expect(addressBytes(clientAddressOf(peer, anything, proxies))).toEqual(bytes);
      }),
    );
  });
});
