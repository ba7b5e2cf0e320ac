import { isIPv4 } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EndpointPolicy, endpointPolicyFromEnv } from '../../src/devices/endpoint-policy.ts';
import { BridgeError } from '../../src/errors.ts';
import { formatIPv6, parseEndpoint, parseIPv4, parseIPv6 } from '../../src/protocol/adb/endpoint.ts';

const noLookup = async (host: string): Promise<string[]> => {
  throw new Error(`unexpected lookup of ${host}`);
};

async function refusal(policy: EndpointPolicy, endpoint: unknown): Promise<BridgeError> {
  try {
    await policy.check(endpoint);
  } catch (err) {
    expect(err).toBeInstanceOf(BridgeError);
    return err as BridgeError;
  }
  throw new Error(`${String(endpoint)} was accepted`);
}

describe('parseEndpoint', () => {
  it('accepts IPv4, bracketed IPv6 and DNS names, canonicalised', () => {
    expect(parseEndpoint('127.0.0.1:5555')).toEqual({
      host: '127.0.0.1',
      port: 5555,
      kind: 'ipv4',
      endpoint: '127.0.0.1:5555',
    });
    expect(parseEndpoint('[FD00:0:0::01]:1')).toEqual({
      host: 'fd00::1',
      port: 1,
      kind: 'ipv6',
      endpoint: '[fd00::1]:1',
    });
    expect(parseEndpoint('Tunnel-1.Farm.Example.:65535')).toEqual({
      host: 'tunnel-1.farm.example',
      port: 65535,
      kind: 'dns',
      endpoint: 'tunnel-1.farm.example:65535',
    });
    expect(parseEndpoint('localhost:5037').kind).toBe('dns');
  });

  it.each([
    ['', 'must be 1-300'],
    ['127.0.0.1', 'missing ":port"'],
    ['127.0.0.1:0', 'port must be'],
    ['127.0.0.1:65536', 'port must be'],
    ['127.0.0.1:05555', 'port must be'],
    ['127.0.0.1:+5', 'port must be'],
    ['127.0.0.1: 5', 'port must be'],
    ['127.0.0.01:5555', 'dotted-quad'],
    ['127.1:5555', 'dotted-quad'],
    ['256.0.0.1:5555', 'dotted-quad'],
    ['0x7f000001:5555', 'not a host name'],
    ['0x7f.1:5555', 'not a host name'],
    ['host.123:5555', 'not a host name'],
    ['-bad.example:5555', 'not a host name'],
    ['a_b.example:5555', 'not a host name'],
    ['::1:5555', 'must be in brackets'],
    ['[::1]', 'must be "[address]:port"'],
    ['[fe80::1%eth0]:5555', 'zone ids'],
    ['[1:2:3:4:5:6:7:8:9]:5555', 'not an IPv6'],
    ['[::1::2]:5555', 'not an IPv6'],
    ['user@127.0.0.1:5555', 'not a host name'],
    ['127.0.0.1:5555/x', 'port must be'],
  ])('refuses %j (%s)', (endpoint, rule) => {
    let error: unknown;
    try {
      parseEndpoint(endpoint);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(BridgeError);
    expect((error as BridgeError).code).toBe('INVALID_ARGUMENT');
    expect((error as BridgeError).message).toContain(rule);
  });

  it('refuses non-strings', () => {
    for (const value of [undefined, null, 5555, {}, ['127.0.0.1:5555']]) {
      expect(() => parseEndpoint(value)).toThrow(BridgeError);
    }
  });

  it('property: garbage only ever throws BridgeError INVALID_ARGUMENT', () => {
    const alphabet = fc.constantFrom(...'0123456789abcdefxX:.[]%-*/@ _\n\u0000é'.split(''));
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: alphabet })),
        (s) => {
          try {
            const parsed = parseEndpoint(s);
            // Accepted input is canonical-stable.
            expect(parseEndpoint(parsed.endpoint)).toEqual(parsed);
          } catch (err) {
            expect(err).toBeInstanceOf(BridgeError);
            expect((err as BridgeError).code).toBe('INVALID_ARGUMENT');
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('property: IPv4 parsing agrees with node:net on dotted quads', () => {
    const quad = fc
      .tuple(
        ...Array.from({ length: 4 }, () =>
          fc.oneof(fc.nat(300).map(String), fc.constantFrom('00', '01', '007')),
        ),
      )
      .map((p) => p.join('.'));
    fc.assert(
      fc.property(quad, (s) => {
        expect(parseIPv4(s) !== null).toBe(isIPv4(s));
      }),
    );
  });

  it('property: IPv6 format is RFC 5952 (as WHATWG URL prints it) and round-trips', () => {
    const group = fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff }));
    const value = fc
      .array(group, { minLength: 8, maxLength: 8 })
      .map((gs) => gs.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n));
    fc.assert(
      fc.property(value, (v) => {
        const text = formatIPv6(v);
        expect(parseIPv6(text)).toBe(v);
        expect(`[${text}]`).toBe(new URL(`http://[${text}]/`).hostname);
        // Uncompressed upper-case text parses to the same value.
        const full = Array.from({ length: 8 }, (_, i) => ((v >> BigInt((7 - i) * 16)) & 0xffffn).toString(16))
          .join(':')
          .toUpperCase();
        expect(parseIPv6(full)).toBe(v);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('EndpointPolicy: default (nothing configured)', () => {
  const policy = new EndpointPolicy({ lookup: noLookup });

  it('allows loopback only', async () => {
    expect(policy.isDefault).toBe(true);
    expect(policy.rules).toEqual(['127.0.0.0/8', '::1/128']);
    expect((await policy.check('127.0.0.1:5555')).rule).toBe('127.0.0.0/8');
    expect((await policy.check('127.255.0.9:1')).host).toBe('127.255.0.9');
    expect((await policy.check('[::1]:5555')).endpoint).toBe('[::1]:5555');
  });

  it.each([
    '10.0.0.5:5555',
    '172.16.1.1:5555',
    '192.168.1.1:5555',
    '8.8.8.8:5555',
    '[fd00::1]:5555',
    '[2001:db8::1]:5555',
  ])('refuses %s, naming endpoint and rule', async (endpoint) => {
    const err = await refusal(policy, endpoint);
    expect(err.code).toBe('PERMISSION_DENIED');
    expect(err.message).toContain(endpoint);
    expect(err.message).toContain('loopback only');
    expect(err.details?.['endpoint']).toBe(endpoint);
  });

  it('refuses the tricks whatever the list says', async () => {
    const wide = new EndpointPolicy({ allow: ['0.0.0.0/0', '::/0'], lookup: noLookup });
    for (const [endpoint, what] of [
      ['0.0.0.0:5555', 'unspecified'],
      ['[::]:5555', 'unspecified'],
      ['224.0.0.1:5555', 'multicast'],
      ['255.255.255.255:5555', 'broadcast'],
      ['[ff02::1]:5555', 'multicast'],
      ['[::ffff:127.0.0.1]:5555', 'IPv4-mapped'],
      ['[::ffff:7f00:1]:5555', 'IPv4-mapped'],
      ['[::127.0.0.1]:5555', 'IPv4-compatible'],
      ['[64:ff9b::7f00:1]:5555', 'NAT64'],
      ['[2002:7f00:1::]:5555', '6to4'],
    ] as const) {
      const err = await refusal(wide, endpoint);
      expect(err.code, endpoint).toBe('PERMISSION_DENIED');
      expect(err.message, endpoint).toContain(what);
      expect(err.message).toContain('never allowed');
    }
  });
});

describe('EndpointPolicy: configured', () => {
  it('a broad rule never opens loopback, private or link-local ranges', async () => {
    const policy = new EndpointPolicy({ allow: ['0.0.0.0/0', '::/0'], lookup: noLookup });
    expect((await policy.check('8.8.8.8:5555')).rule).toBe('0.0.0.0/0');
    expect((await policy.check('[2606:4700::1111]:443')).rule).toBe('::/0');
    for (const endpoint of [
      '127.0.0.1:5555',
      '10.1.2.3:5555',
      '172.31.0.1:5555',
      '192.168.0.1:5555',
      '169.254.169.254:80',
      '100.64.0.1:5555',
      '[::1]:5555',
      '[fd12::1]:5555',
      '[fe80::1]:5555',
    ]) {
      const err = await refusal(policy, endpoint);
      expect(err.code, endpoint).toBe('PERMISSION_DENIED');
      expect(err.message, endpoint).toContain('opens only when a rule inside it is listed');
    }
  });

  it('private and link-local ranges open when listed, and only the listed part', async () => {
    const policy = new EndpointPolicy({
      allow: ['10.0.0.0/8', '192.168.7.0/24', '169.254.10.0/24', 'fd00::/8'],
      lookup: noLookup,
    });
    expect(policy.isDefault).toBe(false);
    expect((await policy.check('10.200.3.4:5555')).rule).toBe('10.0.0.0/8');
    expect((await policy.check('192.168.7.9:5555')).rule).toBe('192.168.7.0/24');
    expect((await policy.check('169.254.10.1:5555')).rule).toBe('169.254.10.0/24');
    expect((await policy.check('[fd00::5]:5555')).rule).toBe('fd00::/8');
    expect((await refusal(policy, '192.168.8.1:5555')).code).toBe('PERMISSION_DENIED');
    expect((await refusal(policy, '169.254.169.254:80')).code).toBe('PERMISSION_DENIED');
    // A configured list replaces the default: loopback is gone unless listed.
    expect((await refusal(policy, '127.0.0.1:5555')).message).toContain('allowlist: 10.0.0.0/8');
  });

  it('host names and globs admit names without resolving them', async () => {
    const policy = new EndpointPolicy({ allow: ['tunnels.example.com', '*.farm.example'], lookup: noLookup });
    expect((await policy.check('TUNNELS.example.com:7000')).rule).toBe('tunnels.example.com');
    expect((await policy.check('a.b.farm.example:7000')).rule).toBe('*.farm.example');
    expect((await policy.check('d1.farm.example:7000')).endpoint).toBe('d1.farm.example:7000');
  });

  it('other names must resolve to allowed addresses only — every one of them', async () => {
    const table: Record<string, string[]> = {
      'farm.example': ['10.0.0.1'],
      'evilfarm.example': ['10.0.0.2'],
      'mixed.example': ['10.0.0.3', '169.254.169.254'],
      'mapped.example': ['::ffff:10.0.0.4'],
      'v6.example': ['fd00::1', '10.0.0.9'],
    };
    const lookups: string[] = [];
    const policy = new EndpointPolicy({
      allow: ['10.0.0.0/8', 'fd00::/8', '*.farm.example'],
      lookup: async (host) => {
        lookups.push(host);
        const found = table[host];
        if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        return found;
      },
    });
    // `*.farm.example` does not cover the bare suffix: it is resolved.
    const bare = await policy.check('farm.example:5555');
    expect(bare.rule).toBe('10.0.0.0/8');
    expect(bare.addresses).toEqual(['10.0.0.1']);
    expect((await policy.check('evilfarm.example:5555')).rule).toBe('10.0.0.0/8');
    expect((await policy.check('v6.example:5555')).addresses).toEqual(['fd00::1', '10.0.0.9']);
    const mixed = await refusal(policy, 'mixed.example:5555');
    expect(mixed.code).toBe('PERMISSION_DENIED');
    expect(mixed.message).toContain('169.254.169.254');
    expect(mixed.message).toContain('every resolved address must be allowed');
    expect((await refusal(policy, 'mapped.example:5555')).message).toContain('IPv4-mapped');
    const missing = await refusal(policy, 'nowhere.example:5555');
    expect(missing.code).toBe('PERMISSION_DENIED');
    expect(missing.message).toContain('does not resolve');
    expect(lookups).toEqual([
      'farm.example',
      'evilfarm.example',
      'v6.example',
      'mixed.example',
      'mapped.example',
      'nowhere.example',
    ]);
  });

  it('a transient DNS failure is UNAVAILABLE (retryable), not a refusal', async () => {
    const policy = new EndpointPolicy({
      lookup: async () => {
        throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
      },
    });
    const err = await refusal(policy, 'flaky.example:5555');
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.retryable).toBe(true);
  });

  it('localhost resolves through the real resolver and is allowed by default', async () => {
    const decision = await new EndpointPolicy().check('localhost:5555');
    expect(decision.addresses?.length).toBeGreaterThan(0);
    expect(decision.rule).toMatch(/127\.0\.0\.0\/8|::1\/128/);
  });

  it.each([
    ['10.0.0.1/8', 'host bits set (did you mean 10.0.0.0/8?)'],
    ['10.0.0.0/33', 'not a valid address or CIDR'],
    ['farm.*.example', '"*" is allowed only as the first label'],
    ['*.example', 'at least two labels'],
    ['*', '"*" is allowed only'],
    ['not a host', 'not a CIDR, address, host name'],
  ])('refuses the config entry %j', (entry, rule) => {
    expect(() => endpointPolicyFromEnv({ DEVICEBRIDGE_TUNNEL_ALLOW: `127.0.0.0/8,${entry}` })).toThrow(
      new RegExp(`DEVICEBRIDGE_TUNNEL_ALLOW entry 1 .*${rule.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
  });

  it('endpointPolicyFromEnv: comma-separated, blank = default', async () => {
    expect(endpointPolicyFromEnv({}).isDefault).toBe(true);
    expect(endpointPolicyFromEnv({ DEVICEBRIDGE_TUNNEL_ALLOW: ' , ' }).isDefault).toBe(true);
    const policy = endpointPolicyFromEnv({ DEVICEBRIDGE_TUNNEL_ALLOW: ' 10.0.0.0/8 , *.farm.example,::1 ' });
    expect(policy.rules).toEqual(['10.0.0.0/8', '*.farm.example', '::1/128']);
    expect((await refusal(policy, '127.0.0.1:5555')).code).toBe('PERMISSION_DENIED');
  });
});

// --- Property: nothing outside the allowlist is ever accepted (independent number-based oracle). ---

const SPECIAL_V4: Array<[number, number]> = [
  [0x7f000000, 8],
  [0x0a000000, 8],
  [0xac100000, 12],
  [0xc0a80000, 16],
  [0xa9fe0000, 16],
  [0x64400000, 10],
];
const NEVER_V4: Array<[number, number]> = [
  [0x00000000, 8],
  [0xe0000000, 4],
  [0xf0000000, 4],
];

function inRange(addr: number, [net, prefix]: [number, number]): boolean {
  if (prefix === 0) return true;
  const size = 2 ** (32 - prefix);
  return addr >= net && addr < net + size;
}

function dotted(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

const interestingV4 = fc.oneof(
  fc.integer({ min: 0, max: 0xffffffff }),
  fc
    .constantFrom(...SPECIAL_V4, ...NEVER_V4)
    .chain(([net, prefix]) => fc.integer({ min: net, max: net + 2 ** (32 - prefix) - 1 })),
);

const cidrRule = fc
  .tuple(interestingV4, fc.integer({ min: 0, max: 32 }))
  .map(([addr, prefix]): [number, number] => {
    const size = 2 ** (32 - prefix);
    return [addr - (addr % size), prefix];
  });

function oracleAllows(rules: Array<[number, number]>, addr: number): boolean {
  if (NEVER_V4.some((r) => inRange(addr, r))) return false;
  const guard = SPECIAL_V4.find((r) => inRange(addr, r));
  return rules.some(
    (rule) =>
      inRange(addr, rule) && (guard === undefined || (rule[1] >= guard[1] && inRange(rule[0], guard))),
  );
}

describe('property: the allowlist is the only way in', () => {
  it('an IPv4 endpoint is accepted exactly when the oracle allows it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(cidrRule, { minLength: 1, maxLength: 5 }),
        interestingV4,
        fc.integer({ min: 1, max: 65535 }),
        async (rules, addr, port) => {
          const policy = new EndpointPolicy({
            allow: rules.map(([net, prefix]) => `${dotted(net)}/${prefix}`),
            lookup: noLookup,
          });
          const endpoint = `${dotted(addr)}:${port}`;
          let accepted = false;
          try {
            accepted = (await policy.check(endpoint)).endpoint === endpoint;
          } catch (err) {
            expect(err).toBeInstanceOf(BridgeError);
            expect((err as BridgeError).code).toBe('PERMISSION_DENIED');
          }
          expect(accepted).toBe(oracleAllows(rules, addr));
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('a DNS name is accepted only when listed or when every resolved address is', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(cidrRule, { minLength: 1, maxLength: 4 }),
        fc.array(interestingV4, { minLength: 1, maxLength: 4 }),
        fc.constantFrom('d1.farm.example', 'other.example', 'farm.example'),
        async (rules, addrs, name) => {
          const policy = new EndpointPolicy({
            allow: [...rules.map(([net, prefix]) => `${dotted(net)}/${prefix}`), '*.farm.example'],
            lookup: async () => addrs.map(dotted),
          });
          let accepted = false;
          try {
            await policy.check(`${name}:5555`);
            accepted = true;
          } catch (err) {
            expect((err as BridgeError).code).toBe('PERMISSION_DENIED');
          }
          const listed = name.endsWith('.farm.example');
          expect(accepted).toBe(listed || addrs.every((a) => oracleAllows(rules, a)));
        },
      ),
      { numRuns: 800 },
    );
  });

  it('garbage to check() only ever throws BridgeError', async () => {
    const policy = new EndpointPolicy({
      allow: ['0.0.0.0/0', '*.farm.example'],
      lookup: async () => ['8.8.8.8'],
    });
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.anything()), async (input) => {
        try {
          await policy.check(input);
        } catch (err) {
          expect(err).toBeInstanceOf(BridgeError);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
