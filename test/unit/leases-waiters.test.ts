/** parseWaiters: the parser of the list-waiters reply (stored waiter descriptions: outside input). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWaiter, parseWaiters } from '../../src/leases/store-common.ts';
import type { Waiter } from '../../src/leases/types.ts';
import { PROTOTYPE_KEYS } from '../../src/strict-json.ts';

// Label keys a stored description may hold (strict JSON refuses prototype keys: a different test).
const labelKey = fc.string().filter((k) => !PROTOTYPE_KEYS.has(k));

const waiter: fc.Arbitrary<Waiter> = fc.record(
  {
    waiterId: fc.string({ minLength: 1 }),
    queueKey: fc.string(),
    selector: fc.record(
      { deviceId: fc.string(), labels: fc.dictionary(labelKey, fc.string()) },
      { requiredKeys: [] },
    ),
    tenant: fc.string(),
    node: fc.string(),
    since: fc.nat(),
    position: fc.integer({ min: 1, max: 1_000_000 }),
    clientWaiterId: fc.string(),
  },
  { requiredKeys: ['waiterId', 'queueKey', 'selector', 'tenant', 'node', 'since', 'position'] },
);

const stored = (w: Waiter) =>
  JSON.stringify({
    queueKey: w.queueKey,
    selector: w.selector,
    tenant: w.tenant,
    node: w.node,
    since: w.since,
    ...(w.clientWaiterId === undefined ? {} : { clientWaiterId: w.clientWaiterId }),
  });

describe('parseWaiters', () => {
  it('round-trips every stored description, sorted by queue and place', () => {
    fc.assert(
      fc.property(fc.array(waiter, { maxLength: 8 }), (waiters) => {
        const reply = waiters.flatMap((w) => [w.waiterId, w.position, stored(w)]);
        const parsed = parseWaiters(reply);
        expect(parsed).toHaveLength(waiters.length);
        for (const w of waiters) expect(parsed).toContainEqual(w);
        for (let i = 1; i < parsed.length; i++) {
          const [a, b] = [parsed[i - 1]!, parsed[i]!];
          expect(a.queueKey < b.queueKey || (a.queueKey === b.queueKey && a.position <= b.position)).toBe(
            true,
          );
        }
      }),
    );
  });

  it('skips what is not a waiter (never throws): any string, a bad field, a bad place', () => {
    fc.assert(
      fc.property(fc.string(), fc.anything(), (json, position) => {
        const result = parseWaiter('w', position as number, json);
        expect(result === null || typeof result.tenant === 'string').toBe(true);
      }),
    );
    const good = { queueKey: 'q', selector: {}, tenant: 't', node: 'n', since: 1 };
    expect(parseWaiter('w', 1, JSON.stringify(good))).toMatchObject({ waiterId: 'w', position: 1 });
    for (const [field, value] of [
      ['queueKey', 1],
      ['selector', []],
      ['selector', null],
      ['tenant', null],
      ['node', 2],
      ['since', 'x'],
    ] as const) {
      expect(parseWaiter('w', 1, JSON.stringify({ ...good, [field]: value })), field).toBeNull();
    }
    expect(parseWaiter('w', 0, JSON.stringify(good))).toBeNull();
    expect(parseWaiter('w', 1.5, JSON.stringify(good))).toBeNull();
    expect(parseWaiter('', 1, JSON.stringify(good))).toBeNull();
    expect(parseWaiters('not an array')).toEqual([]);
  });
});
