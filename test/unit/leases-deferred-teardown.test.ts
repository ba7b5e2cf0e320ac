/** parseDeferredTeardown: the stored JSON of a deferred teardown, checked field by field (property-based). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBridgeError } from '../../src/errors.ts';
import { parseDeferredTeardown } from '../../src/leases/store-common.ts';

const item = {
  lease: { id: 'lease_1', deviceId: 'dev-a', fencingToken: 3, state: 'released' },
  reason: 'released',
  from: 'node-b',
  owner: 'node-a',
  deferredAt: 1_700_000_000_000,
};

describe('parseDeferredTeardown', () => {
  it('reads back what was written', () => {
    expect(parseDeferredTeardown(JSON.stringify(item))).toEqual(item);
    const resumed = { ...item, resumedFrom: 'node-c#Zx9' };
    expect(parseDeferredTeardown(JSON.stringify(resumed))).toEqual(resumed);
  });

  it('any text is either a deferred teardown or an INTERNAL error naming what is wrong (never a throw of another kind)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (raw) => {
        try {
          const parsed = parseDeferredTeardown(raw);
          expect(typeof parsed.lease.id).toBe('string');
          expect(['released', 'expired']).toContain(parsed.reason);
        } catch (err) {
          expect(isBridgeError(err) && err.code === 'INTERNAL').toBe(true);
          expect((err as Error).message).toMatch(/^deferred teardown cannot be read: /);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('names the first bad field of an otherwise valid record', () => {
    const broken = fc.constantFrom(
      ['lease.id', { ...item, lease: { ...item.lease, id: 7 } }],
      ['lease.deviceId', { ...item, lease: { ...item.lease, deviceId: '' } }],
      ['lease.fencingToken', { ...item, lease: { ...item.lease, fencingToken: 1.5 } }],
      ['reason', { ...item, reason: 'forgotten' }],
      ['from', { ...item, from: null }],
      ['owner', { ...item, owner: undefined }],
      ['deferredAt', { ...item, deferredAt: 'soon' }],
      ['resumedFrom', { ...item, resumedFrom: 3 }],
      ['lease', { ...item, lease: [] }],
    );
    fc.assert(
      fc.property(broken, ([field, value]) => {
        expect(() => parseDeferredTeardown(JSON.stringify(value))).toThrow(
          `deferred teardown cannot be read: ${field} is missing or invalid`,
        );
      }),
    );
  });
});
