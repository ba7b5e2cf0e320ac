import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeSelector, waited } from '../../src/console/client/waiting-format.ts';
import type { LeaseSelector } from '../../src/devices/selector.ts';
import { queueKeyFor } from '../../src/leases/queue-key.ts';

const name = fc.stringMatching(/^[A-Za-z0-9._/-]{1,12}$/);
const selector: fc.Arbitrary<LeaseSelector> = fc.record(
  {
    deviceId: name,
    labels: fc.dictionary(name, name, { maxKeys: 4 }),
    sdkMin: fc.integer({ min: 1, max: 100 }),
    sdkMax: fc.integer({ min: 1, max: 100 }),
  },
  { requiredKeys: [] },
);

describe("console's Waiting table: selector in words, time waited", () => {
  it('names the device, the labels in key order and the SDK range', () => {
    expect(describeSelector({})).toBe('any device');
    expect(describeSelector({ labels: {} })).toBe('any device');
    expect(
      describeSelector({
        sdkMax: 34,
        labels: { team: 'qa', pool: 'eu' },
        deviceId: 'emulator-5554',
        sdkMin: 28,
      }),
    ).toBe('device emulator-5554 · labels pool=eu, team=qa · SDK 28–34');
    expect(describeSelector({ sdkMin: 30 })).toBe('SDK ≥ 30');
    expect(describeSelector({ sdkMax: 30 })).toBe('SDK ≤ 30');
  });

  it('selectors of one queue read the same (label order does not matter)', () => {
    fc.assert(
      fc.property(selector, (s) => {
        const reversed: LeaseSelector = { ...s };
        if (s.labels) reversed.labels = Object.fromEntries(Object.entries(s.labels).reverse());
        expect(queueKeyFor(reversed)).toBe(queueKeyFor(s));
        expect(describeSelector(reversed)).toBe(describeSelector(s));
      }),
    );
  });

  it('every term of a selector shows in its words', () => {
    fc.assert(
      fc.property(selector, (s) => {
        const words = describeSelector(s);
        if (s.deviceId !== undefined) expect(words).toContain(`device ${s.deviceId}`);
        for (const [k, v] of Object.entries(s.labels ?? {})) expect(words).toContain(`${k}=${v}`);
        if (s.sdkMin !== undefined) expect(words).toContain(String(s.sdkMin));
        if (s.sdkMax !== undefined) expect(words).toContain(String(s.sdkMax));
      }),
    );
  });

  it('time waited: seconds, then minutes and seconds, then hours and minutes; never negative', () => {
    expect(waited(-5)).toBe('0 s');
    expect(waited(999)).toBe('0 s');
    expect(waited(42_400)).toBe('42 s');
    expect(waited(185_000)).toBe('3 min 05 s');
    expect(waited(3_720_000)).toBe('1 h 02 min');
    // Counting up: a later time never reads as less waited.
    const seconds = (text: string) => {
      const [a, unitA, b] = text.split(' ');
      if (unitA === 's') return Number(a);
      if (unitA === 'min') return Number(a) * 60 + Number(b);
      return Number(a) * 3600 + Number(b) * 60;
    };
    fc.assert(
      fc.property(fc.nat(10 * 3600_000), fc.nat(3600_000), (ms, more) => {
        expect(seconds(waited(ms + more))).toBeGreaterThanOrEqual(seconds(waited(ms)));
        expect(Math.floor(ms / 1000) - seconds(waited(ms))).toBeLessThan(60);
      }),
    );
  });
});
