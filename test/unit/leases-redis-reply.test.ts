/** leaseFromReply: the parser of the leases the lua scripts answer (values of LEASE_FIELDS, in order). */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { LEASE_FIELDS, leaseFromReply } from '../../src/leases/redis-store.ts';
import type { Lease } from '../../src/leases/types.ts';
import { PROTOTYPE_KEYS } from '../../src/strict-json.ts';

// Label keys a stored selector may hold (the strict JSON it is read with refuses prototype keys).
const labelKey = fc.string().filter((k) => !PROTOTYPE_KEYS.has(k));

const lease: fc.Arbitrary<Lease> = fc.record(
  {
    // A lease always has an id and a device.
    id: fc.string({ minLength: 1 }),
    deviceId: fc.string({ minLength: 1 }),
    tenant: fc.string(),
    holder: fc.string(),
    fencingToken: fc.integer({ min: 1 }),
    acquiredAt: fc.nat(),
    expiresAt: fc.nat(),
    ttlSeconds: fc.double({ min: 0.001, max: 86_400, noNaN: true }),
    selector: fc.record(
      {
        deviceId: fc.string(),
        labels: fc.dictionary(labelKey, fc.string()),
        sdkMin: fc.nat(100),
        sdkMax: fc.nat(100),
      },
      { requiredKeys: [] },
    ),
    state: fc.constantFrom('active' as const, 'released' as const, 'expired' as const),
    endedAt: fc.nat(),
  },
  {
    requiredKeys: [
      'id',
      'deviceId',
      'tenant',
      'holder',
      'fencingToken',
      'acquiredAt',
      'expiresAt',
      'ttlSeconds',
      'selector',
      'state',
    ],
  },
);

/** What the scripts answer for a lease hash they wrote (every value a string, nil when absent). */
function positional(l: Lease): Array<string | null> {
  const stored: Record<string, unknown> = { ...l, selector: JSON.stringify(l.selector) };
  if (l.keepApps) stored['keepApps'] = '1';
  return LEASE_FIELDS.map((field) => (stored[field] === undefined ? null : String(stored[field])));
}

describe('leaseFromReply', () => {
  it('reads back every lease the scripts can write', () => {
    fc.assert(
      fc.property(lease, fc.boolean(), (l, keepApps) => {
        const written = keepApps ? { ...l, keepApps: true } : l;
        expect(leaseFromReply(positional(written))).toEqual(JSON.parse(JSON.stringify(written)));
      }),
    );
  });

  it('refuses what is not one value per lease field (INTERNAL)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything().filter((v) => !Array.isArray(v)),
          fc.array(fc.option(fc.string())).filter((a) => a.length !== LEASE_FIELDS.length),
        ),
        (reply) => {
          expect(() => leaseFromReply(reply)).toThrow(BridgeError);
        },
      ),
    );
  });

  it('refuses a lease whose number field holds something else or is missing (INTERNAL)', () => {
    const numberFields = ['fencingToken', 'acquiredAt', 'expiresAt', 'ttlSeconds', 'endedAt'] as const;
    fc.assert(
      fc.property(
        lease,
        fc.constantFrom(...numberFields),
        fc.constantFrom('x', 'NaN', 'Infinity', '1e999', '12abc', null),
        (l, field, bad) => {
          const reply = positional({ ...l, endedAt: l.endedAt ?? 1 });
          if (field === 'endedAt' && bad === null) return; // an active lease has no endedAt
          reply[LEASE_FIELDS.indexOf(field)] = bad;
          expect(() => leaseFromReply(reply)).toThrow(BridgeError);
        },
      ),
    );
  });

  it('LEASE_FIELDS is the field list of lua/includes/lease-fields.lua, in its order (HMGET and LF)', () => {
    const lua = readFileSync(
      new URL('../../src/leases/lua/includes/lease-fields.lua', import.meta.url),
      'utf8',
    );
    const hmget = /redis\.call\('HMGET', key,([^)]*)\)/.exec(lua)?.[1] ?? '';
    expect([...hmget.matchAll(/'([^']+)'/g)].map((m) => m[1])).toEqual([...LEASE_FIELDS]);
    const lf = /local LF = \{([^}]*)\}/.exec(lua)?.[1] ?? '';
    expect([...lf.matchAll(/(\w+) = (\d+)/g)].map((m) => [m[1], Number(m[2])])).toEqual(
      LEASE_FIELDS.map((name, i) => [name, i + 1]),
    );
  });
});
