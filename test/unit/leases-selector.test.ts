import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LeaseSelectorSchema as Selector } from '../../src/api/index.ts';
import { DEVICE_ID_PATTERN, DeviceIdSchema, LABEL_PATTERN } from '../../src/devices/labels.ts';
import { deviceIdFor } from '../../src/devices/properties.ts';
import {
  type LeaseSelector,
  LeaseSelectorSchema,
  MAX_SDK,
  MIN_SDK,
  validateSelector,
} from '../../src/devices/selector.ts';
import { BridgeError } from '../../src/errors.ts';
import { queueKeyFor } from '../../src/leases/queue-key.ts';
import { DeviceIdParam } from '../../src/server/routes/devices.ts';

const token = fc.stringMatching(/^[A-Za-z0-9._/-]{1,12}$/);
const selectorArb: fc.Arbitrary<LeaseSelector> = fc.record(
  {
    deviceId: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,19}$/),
    labels: fc.dictionary(token, token, { maxKeys: 5 }),
    sdkMin: fc.integer({ min: 1, max: 50 }),
    sdkMax: fc.integer({ min: 50, max: 100 }),
  },
  { requiredKeys: [] },
);

function fieldErrors(input: unknown): Array<{ path: string; message: string }> {
  try {
    validateSelector(input);
  } catch (err) {
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).code).toBe('INVALID_ARGUMENT');
    return ((err as BridgeError).details?.errors ?? []) as Array<{ path: string; message: string }>;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be refused`);
}

describe('validateSelector', () => {
  it('accepts valid selectors unchanged', () => {
    fc.assert(
      fc.property(selectorArb, (s) => {
        expect(validateSelector(s)).toEqual(s);
      }),
    );
    expect(validateSelector(undefined)).toEqual({});
  });

  it('refuses bad input with an error naming the field', () => {
    expect(fieldErrors({ labels: { 'bad key': 'x' } })[0]?.path).toBe('selector.labels.bad key');
    expect(fieldErrors({ labels: { k: 'a'.repeat(64) } })[0]?.path).toBe('selector.labels.k');
    expect(fieldErrors({ labels: { k: 'a;b' } })[0]?.message).toMatch(/label value/);
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    expect(fieldErrors({ labels: many })[0]).toMatchObject({
      path: 'selector.labels',
      message: 'at most 16 labels',
    });
    expect(fieldErrors({ deviceId: 'a b' })[0]?.path).toBe('selector.deviceId');
    expect(fieldErrors({ deviceId: 'x'.repeat(129) })[0]?.path).toBe('selector.deviceId');
    expect(fieldErrors({ sdkMin: 0 })[0]?.path).toBe('selector.sdkMin');
    expect(fieldErrors({ sdkMax: 101 })[0]?.path).toBe('selector.sdkMax');
    expect(fieldErrors({ sdkMin: 2.5 })[0]?.message).toMatch(/integer/);
    expect(fieldErrors({ sdkMin: 30, sdkMax: 29 })[0]).toMatchObject({ path: 'selector.sdkMin' });
    expect(fieldErrors({ owner: 'x' })[0]?.path).toBe('selector');
    expect(fieldErrors('labels')[0]?.path).toBe('selector');
  });

  it('never throws anything but INVALID_ARGUMENT on arbitrary input', () => {
    fc.assert(
      fc.property(fc.anything(), (input) => {
        try {
          validateSelector(input);
        } catch (err) {
          expect((err as BridgeError).code).toBe('INVALID_ARGUMENT');
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('queueKeyFor', () => {
  it('does not depend on label order', () => {
    fc.assert(
      fc.property(
        selectorArb.chain((s) => {
          const entries = Object.entries(s.labels ?? {});
          const n = entries.length;
          return fc.tuple(fc.constant(s), fc.shuffledSubarray(entries, { minLength: n, maxLength: n }));
        }),
        ([s, shuffled]) => {
          const again: LeaseSelector = { ...s, labels: Object.fromEntries(shuffled) };
          expect(queueKeyFor(again)).toBe(queueKeyFor(s));
        },
      ),
    );
  });

  it('is injective: equal keys exactly when the canonical selectors are equal', () => {
    const canon = (s: LeaseSelector) => ({
      deviceId: s.deviceId,
      labels: Object.entries(s.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)),
      sdkMin: s.sdkMin,
      sdkMax: s.sdkMax,
    });
    fc.assert(
      fc.property(selectorArb, selectorArb, (a, b) => {
        expect(queueKeyFor(a) === queueKeyFor(b)).toBe(JSON.stringify(canon(a)) === JSON.stringify(canon(b)));
      }),
    );
    expect(queueKeyFor({ labels: {} })).toBe(queueKeyFor({}));
    expect(queueKeyFor({ labels: { a: 'b,c' } })).not.toBe(queueKeyFor({ labels: { a: 'b', c: '' } }));
  });

  it('is stable across processes (a literal key)', () => {
    expect(queueKeyFor({ sdkMax: 34, labels: { team: 'qa', pool: 'eu' }, deviceId: 'd1' })).toBe(
      '["d1",["pool","eu","team","qa"],null,34]',
    );
  });
});

describe('validateSelector and reserved-looking keys', () => {
  it('keeps a __proto__ label as a label (never drops it, never pollutes)', () => {
    const s = validateSelector(JSON.parse('{"labels":{"__proto__":"x","team":"a"}}'));
    expect(Object.keys(s.labels ?? {})).toEqual(['__proto__', 'team']);
    expect(Object.getPrototypeOf(s.labels)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['x']).toBeUndefined();
    expect(queueKeyFor(s)).toContain('__proto__');
  });
});

describe('one selector, one device-id rule', () => {
  const selectorish = fc.record(
    {
      deviceId: fc.oneof(fc.string({ maxLength: 140 }), fc.stringMatching(DEVICE_ID_PATTERN), fc.integer()),
      labels: fc.oneof(
        fc.dictionary(fc.string({ maxLength: 70 }), fc.string({ maxLength: 70 })),
        fc.anything(),
      ),
      sdkMin: fc.oneof(fc.integer({ min: -5, max: 1005 }), fc.double(), fc.string()),
      sdkMax: fc.oneof(fc.integer({ min: -5, max: 1005 }), fc.double(), fc.string()),
      extra: fc.anything(),
    },
    { requiredKeys: [] },
  );

  it('the route documents the very schema the manager and the registry validate with', () => {
    fc.assert(
      fc.property(fc.oneof(selectorish, fc.anything()), (input) => {
        // An absent selector (null or undefined) is `{}` to the validator (the route defaults it).
        const given = input ?? {};
        const byRoute = Selector.safeParse(given).success;
        const bySchema = LeaseSelectorSchema.safeParse(given).success;
        let byValidator = true;
        try {
          validateSelector(input);
        } catch {
          byValidator = false;
        }
        expect(byRoute).toBe(bySchema);
        expect(byValidator).toBe(bySchema);
      }),
      { numRuns: 500 },
    );
  });

  it('a selector deviceId, the route parameter and a derived id obey the same rule', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 140 }), fc.stringMatching(DEVICE_ID_PATTERN)), (id) => {
        const valid = DEVICE_ID_PATTERN.test(id);
        expect(DeviceIdSchema.safeParse(id).success).toBe(valid);
        expect(DeviceIdParam.safeParse(id).success).toBe(valid);
        expect(LeaseSelectorSchema.safeParse({ deviceId: id }).success).toBe(valid);
      }),
      { numRuns: 500 },
    );
    const endpoint = fc
      .tuple(fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,30}[a-z0-9]$/), fc.integer({ min: 1, max: 65535 }))
      .map(([host, port]) => `${host}:${port}`);
    fc.assert(
      fc.property(endpoint, (e) => {
        let id: string;
        try {
          id = deviceIdFor(e);
        } catch {
          return; // refused endpoints (`..`) have no id
        }
        expect(validateSelector({ deviceId: id }).deviceId).toBe(id);
        expect(DeviceIdParam.safeParse(id).success).toBe(true);
      }),
    );
  });

  it('one sdk bound: integers from MIN_SDK to MAX_SDK, nothing else', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: -10, max: 2000 }), fc.double()), (sdk) => {
        const ok = Number.isInteger(sdk) && sdk >= MIN_SDK && sdk <= MAX_SDK;
        expect(LeaseSelectorSchema.safeParse({ sdkMin: sdk }).success).toBe(ok);
        expect(Selector.safeParse({ sdkMax: sdk }).success).toBe(ok);
      }),
    );
  });

  it('labels follow the device label rule', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 70 }), fc.string({ maxLength: 70 }), (k, v) => {
        const ok = LABEL_PATTERN.test(k) && LABEL_PATTERN.test(v) && k !== '__proto__';
        if (k === '__proto__') return;
        expect(LeaseSelectorSchema.safeParse({ labels: { [k]: v } }).success).toBe(ok);
      }),
    );
  });
});
