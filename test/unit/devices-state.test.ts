/** The device state machine (src/devices/device-state.ts): examples and properties. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DeviceEvent,
  deviceStateFromAdb,
  type HealthState,
  type ObservedState,
  transition,
} from '../../src/devices/device-state.ts';
import { healthEvent, tunnelAction } from '../../src/devices/health.ts';

const online: HealthState = { state: 'online', consecutiveFailures: 0 };

describe('device state machine: examples', () => {
  it('maps adb states: device → online, unauthorized stays, anything else offline', () => {
    expect(deviceStateFromAdb('device')).toBe('online');
    expect(deviceStateFromAdb('unauthorized')).toBe('unauthorized');
    for (const s of ['offline', 'connecting', 'authorizing', undefined, ''])
      expect(deviceStateFromAdb(s)).toBe('offline');
  });

  it('counted failures quarantine at the threshold with a reason naming the last failure', () => {
    const fail: DeviceEvent = {
      type: 'observed',
      observed: 'offline',
      count: true,
      failure: 'adb reports offline',
    };
    const one = transition(online, fail, 2);
    expect(one.next).toEqual({ state: 'offline', consecutiveFailures: 1 });
    expect(one.effects).toEqual([{ type: 'state-changed', state: 'offline', previous: 'online' }]);
    const two = transition(one.next, fail, 2);
    expect(two.next).toEqual({
      state: 'quarantined',
      consecutiveFailures: 2,
      quarantineReason: '2 consecutive health check failures (last: adb reports offline)',
    });
    expect(two.effects).toEqual([
      { type: 'state-changed', state: 'quarantined', previous: 'offline', reason: two.next.quarantineReason },
    ]);
  });

  it('a healthy counted pass resets the count; an uncounted one leaves it', () => {
    const failing: HealthState = { state: 'offline', consecutiveFailures: 3 };
    expect(transition(failing, { type: 'observed', observed: 'online', count: true }, 5).next).toEqual(
      online,
    );
    const uncounted = transition(failing, { type: 'observed', observed: 'online', count: false }, 5);
    expect(uncounted.next).toEqual({ state: 'online', consecutiveFailures: 3 });
  });

  it('quarantine (teardown, admin) and clear', () => {
    const q = transition(online, { type: 'quarantine', reason: 'teardown failed: x' }, 5);
    expect(q.next).toEqual({
      state: 'quarantined',
      consecutiveFailures: 0,
      quarantineReason: 'teardown failed: x',
    });
    expect(q.effects).toEqual([
      { type: 'state-changed', state: 'quarantined', previous: 'online', reason: 'teardown failed: x' },
    ]);
    const again = transition(q.next, { type: 'quarantine', reason: 'admin' }, 5);
    expect(again).toMatchObject({ changed: true, effects: [] });
    const cleared = transition(
      { ...q.next, consecutiveFailures: 7 },
      { type: 'clear', observed: 'offline' },
      5,
    );
    expect(cleared.next).toEqual({ state: 'offline', consecutiveFailures: 0 });
    expect(cleared.effects).toEqual([{ type: 'state-changed', state: 'offline', previous: 'quarantined' }]);
    expect(transition(online, { type: 'clear', observed: 'offline' }, 5)).toEqual({
      next: online,
      effects: [],
      changed: false,
    });
  });
});

const observedArb: fc.Arbitrary<ObservedState> = fc.constantFrom('online', 'offline', 'unauthorized');
const eventArb: fc.Arbitrary<DeviceEvent> = fc.oneof(
  fc
    .record({
      type: fc.constant('observed' as const),
      observed: observedArb,
      count: fc.boolean(),
      failure: fc.option(fc.string({ minLength: 1, maxLength: 10 }), { nil: undefined }),
    })
    .map((e) => (e.failure === undefined ? { type: e.type, observed: e.observed, count: e.count } : e)),
  fc.record({ type: fc.constant('quarantine' as const), reason: fc.string({ minLength: 1, maxLength: 10 }) }),
  fc.record({ type: fc.constant('clear' as const), observed: observedArb }),
);
const stateArb: fc.Arbitrary<HealthState> = fc.oneof(
  fc.record({ state: observedArb, consecutiveFailures: fc.nat(10) }),
  fc.record({
    state: fc.constant('quarantined' as const),
    consecutiveFailures: fc.nat(10),
    quarantineReason: fc.string({ minLength: 1, maxLength: 10 }),
  }),
);

describe('device state machine: properties', () => {
  it('a state-changed effect exactly when the state changes, naming the previous state; changed covers it', () => {
    fc.assert(
      fc.property(stateArb, eventArb, fc.integer({ min: 1, max: 6 }), (s, e, threshold) => {
        const t = transition(s, e, threshold);
        const stateChanged = t.next.state !== s.state;
        expect(t.effects.length).toBe(stateChanged ? 1 : 0);
        if (stateChanged) expect(t.effects[0]).toMatchObject({ state: t.next.state, previous: s.state });
        if (stateChanged) expect(t.changed).toBe(true);
        expect(t.next.state === 'quarantined').toBe(t.next.quarantineReason !== undefined);
      }),
    );
  });

  it('only clear leaves quarantine', () => {
    fc.assert(
      fc.property(
        stateArb,
        fc.array(eventArb, { maxLength: 30 }),
        fc.integer({ min: 1, max: 6 }),
        (s0, events, threshold) => {
          let s = s0;
          for (const e of events) {
            const t = transition(s, e, threshold);
            if (s.state === 'quarantined' && e.type !== 'clear') expect(t.next.state).toBe('quarantined');
            s = t.next;
          }
        },
      ),
    );
  });

  it('the count is the run of counted failures since the last counted success or clear; threshold quarantines', () => {
    fc.assert(
      fc.property(
        fc.array(eventArb, { maxLength: 40 }),
        fc.integer({ min: 1, max: 6 }),
        (events, threshold) => {
          let s: HealthState = online;
          let run = 0;
          let quarantinedByHealth = false;
          for (const e of events) {
            const before = s;
            s = transition(s, e, threshold).next;
            if (e.type === 'observed' && e.count) run = e.failure === undefined ? 0 : run + 1;
            if (e.type === 'clear' && before.state === 'quarantined') run = 0;
            expect(s.consecutiveFailures).toBe(run);
            if (
              e.type === 'observed' &&
              e.count &&
              e.failure !== undefined &&
              run >= threshold &&
              before.state !== 'quarantined'
            ) {
              quarantinedByHealth = true;
              expect(s.state).toBe('quarantined');
            }
            if (before.state !== 'quarantined' && s.state !== 'quarantined' && e.type === 'observed') {
              expect(s.state).toBe(e.observed);
            }
          }
          if (quarantinedByHealth)
            expect(s.state === 'quarantined' || events.some((e) => e.type === 'clear')).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is pure: the same input gives the same output and the input is not mutated', () => {
    fc.assert(
      fc.property(stateArb, eventArb, (s, e) => {
        const copy = structuredClone(s);
        expect(transition(s, e, 3)).toEqual(transition(copy, e, 3));
        expect(s).toEqual(copy);
      }),
    );
  });
});

describe('health pass conclusions (src/devices/health.ts)', () => {
  const tunnel = { endpoint: '127.0.0.1:5555', serial: '127.0.0.1:5555' };
  const usb = { serial: 'emulator-5554' };
  const okProbe = async () => null;

  it('tunnel actions: add when untracked, re-connect when adb lost it, nothing for USB devices', () => {
    expect(tunnelAction(tunnel, false, new Map())).toBe('add');
    expect(tunnelAction(tunnel, true, new Map())).toBe('reconnect');
    expect(tunnelAction(tunnel, true, new Map([[tunnel.serial, 'device']]))).toBeNull();
    expect(tunnelAction(tunnel, true, null)).toBeNull();
    expect(tunnelAction(usb, false, new Map())).toBeNull();
  });

  it('events: adb down is an uncounted offline; listed offline or a failed probe are counted failures', async () => {
    expect(await healthEvent(tunnel, null, 'device', okProbe)).toEqual({
      type: 'observed',
      observed: 'offline',
      count: false,
    });
    expect(await healthEvent(usb, new Map([[usb.serial, 'device']]), undefined, okProbe)).toEqual({
      type: 'observed',
      observed: 'online',
      count: true,
    });
    expect(await healthEvent(usb, new Map(), undefined, okProbe)).toEqual({
      type: 'observed',
      observed: 'offline',
      count: true,
      failure: 'adb reports no such device',
    });
    expect(
      await healthEvent(usb, new Map([[usb.serial, 'device']]), undefined, async () => 'probe failed'),
    ).toEqual({ type: 'observed', observed: 'offline', count: true, failure: 'probe failed' });
    // Between re-handshakes of an unauthorized tunnel: still unauthorized, not a failure.
    expect(await healthEvent(tunnel, new Map(), 'unauthorized', okProbe)).toEqual({
      type: 'observed',
      observed: 'unauthorized',
      count: true,
    });
  });

  it('the probe runs only for a device adb calls online', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.constantFrom('device', 'offline', 'unauthorized', 'connecting')),
        async (state) => {
          let probed = false;
          const adb = new Map(state === null ? [] : [[usb.serial, state]]);
          await healthEvent(usb, adb, undefined, async () => {
            probed = true;
            return null;
          });
          expect(probed).toBe(state === 'device');
        },
      ),
    );
  });
});
