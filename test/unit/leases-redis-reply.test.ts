/** leaseFromReply: the parser of the flat field/value arrays the lease scripts return. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { leaseFromReply } from '../../src/leases/redis-store.ts';
import type { Lease } from '../../src/leases/types.ts';

const lease: fc.Arbitrary<Lease> = fc.record(
  {
    id: fc.string(),
    deviceId: fc.string(),
    tenant: fc.string(),
    holder: fc.string(),
    fencingToken: fc.integer({ min: 1 }),
    acquiredAt: fc.nat(),
    expiresAt: fc.nat(),
    ttlSeconds: fc.double({ min: 0.001, max: 86_400, noNaN: true }),
    selector: fc.record(
      {
        deviceId: fc.string(),
        labels: fc.dictionary(fc.string(), fc.string()),
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

/** What HGETALL returns for a lease hash the scripts wrote (every value a string). */
function flat(l: Lease): string[] {
  return Object.entries({ ...l, selector: JSON.stringify(l.selector) }).flatMap(([k, v]) => [k, String(v)]);
}

describe('leaseFromReply', () => {
  it('reads back every lease the scripts can write, in any field order', () => {
    fc.assert(
      fc.property(lease, fc.nat(), (l, rotate) => {
        const pairs = flat(l);
        const shift = (rotate % (pairs.length / 2)) * 2;
        const rotated = [...pairs.slice(shift), ...pairs.slice(0, shift)];
        expect(leaseFromReply(rotated)).toEqual(JSON.parse(JSON.stringify(l)));
      }),
    );
  });

  it('refuses what is not a flat field/value array (INTERNAL)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything().filter((v) => !Array.isArray(v)),
          fc.array(fc.string()).filter((a) => a.length % 2 === 1),
        ),
        (reply) => {
          expect(() => leaseFromReply(reply)).toThrow(BridgeError);
        },
      ),
    );
  });

  it('refuses a lease whose number field holds something else (INTERNAL)', () => {
    const numberFields = ['fencingToken', 'acquiredAt', 'expiresAt', 'ttlSeconds', 'endedAt'];
    fc.assert(
      fc.property(
        lease,
        fc.constantFrom(...numberFields),
        fc.constantFrom('x', 'NaN', 'Infinity', '1e999', '12abc'),
        (l, field, bad) => {
          const pairs = flat({ ...l, endedAt: l.endedAt ?? 1 });
          const at = pairs.findIndex((name, i) => i % 2 === 0 && name === field);
          pairs[at + 1] = bad;
          expect(() => leaseFromReply(pairs)).toThrow(BridgeError);
        },
      ),
    );
  });
});
