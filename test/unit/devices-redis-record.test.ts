/** decodeDeviceRecord: the parser of the device records the Redis store reads back. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeDeviceRecord } from '../../src/devices/redis-store.ts';
import { BridgeError } from '../../src/errors.ts';
import { PROTOTYPE_KEYS } from '../../src/strict-json.ts';
import { deviceRecord } from '../support/device-store-contract.ts';

// Label keys a stored record may hold (the strict JSON it is read with refuses prototype keys).
const labelKey = fc.string().filter((k) => !PROTOTYPE_KEYS.has(k));

describe('decodeDeviceRecord', () => {
  it('reads back any record the store writes', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.constantFrom(
          'online' as const,
          'offline' as const,
          'unauthorized' as const,
          'quarantined' as const,
        ),
        fc.dictionary(labelKey, fc.string()),
        fc.option(fc.string(), { nil: undefined }),
        (id, state, labels, quarantineReason) => {
          const record = deviceRecord(id, {
            state,
            labels,
            ...(quarantineReason === undefined ? {} : { quarantineReason }),
          });
          expect(decodeDeviceRecord('k', JSON.stringify(record))).toEqual(record);
        },
      ),
    );
  });

  it('refuses what is not JSON, or not an object with a string id and state (INTERNAL)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string().filter((text) => {
            try {
              const v: unknown = JSON.parse(text);
              return typeof v !== 'object' || v === null;
            } catch {
              return true;
            }
          }),
          fc
            .jsonValue()
            .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
            .map((v) => JSON.stringify(v)),
          fc
            .record({ id: fc.oneof(fc.integer(), fc.constant(null)), state: fc.string() })
            .map((v) => JSON.stringify(v)),
          fc.record({ id: fc.string() }).map((v) => JSON.stringify(v)),
        ),
        (json) => {
          let err: unknown;
          try {
            decodeDeviceRecord('dev:k', json);
          } catch (e) {
            err = e;
          }
          expect(err).toBeInstanceOf(BridgeError);
          expect((err as BridgeError).code).toBe('INTERNAL');
          expect((err as BridgeError).message).toContain('dev:k');
        },
      ),
    );
  });
});
