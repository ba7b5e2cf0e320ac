/**
 * The device state machine (pure): a device's health state and an event give the next state and
 * the effects to carry out. The registry applies it inside the store's atomic update and carries
 * out the effects (log, `state` event); nothing here does I/O.
 *
 * - `observed` (a health pass, a tunnel event, a refresh): the state adb reports (online, offline,
 *   unauthorized). A counted observation with a failure adds one to `consecutiveFailures`, a counted
 *   one without resets it; at `threshold` consecutive failures the device is quarantined. An
 *   uncounted observation never changes the count. A quarantined device stays quarantined whatever
 *   is observed.
 * - `quarantine` (teardown failure, admin): quarantined with the reason.
 * - `clear` (admin): a quarantined device takes the observed state, its count reset.
 */
import type { DeviceState } from './types.ts';

export type ObservedState = Exclude<DeviceState, 'quarantined'>;

/** The part of a device record the state machine owns. */
export interface HealthState {
  state: DeviceState;
  consecutiveFailures: number;
  quarantineReason?: string;
}

export type DeviceEvent =
  | { type: 'observed'; observed: ObservedState; count: boolean; failure?: string }
  | { type: 'quarantine'; reason: string }
  | { type: 'clear'; observed: ObservedState };

export type DeviceEffect = {
  type: 'state-changed';
  state: DeviceState;
  previous: DeviceState;
  reason?: string;
};

export interface Transition {
  next: HealthState;
  effects: DeviceEffect[];
  /** Whether `next` differs from the current state (a write is needed). */
  changed: boolean;
}

/** adb's device state → the registry's. Transitional states (connecting, authorizing) are offline. */
export function deviceStateFromAdb(state: string | undefined): ObservedState {
  if (state === 'device') return 'online';
  if (state === 'unauthorized') return 'unauthorized';
  return 'offline';
}

function health(state: DeviceState, consecutiveFailures: number, quarantineReason?: string): HealthState {
  return quarantineReason === undefined
    ? { state, consecutiveFailures }
    : { state, consecutiveFailures, quarantineReason };
}

function next(current: HealthState, event: DeviceEvent, threshold: number): HealthState {
  switch (event.type) {
    case 'observed': {
      const failing = event.failure !== undefined;
      const failures = event.count
        ? failing
          ? current.consecutiveFailures + 1
          : 0
        : current.consecutiveFailures;
      if (current.state === 'quarantined') return health('quarantined', failures, current.quarantineReason);
      if (failing && event.count && failures >= threshold) {
        return health(
          'quarantined',
          failures,
          `${failures} consecutive health check failures (last: ${event.failure})`,
        );
      }
      return health(event.observed, failures);
    }
    case 'quarantine':
      return health('quarantined', current.consecutiveFailures, event.reason);
    case 'clear':
      if (current.state !== 'quarantined')
        return health(current.state, current.consecutiveFailures, current.quarantineReason);
      return health(event.observed, 0);
  }
}

/** The next state of a device and the effects of getting there. */
export function transition(current: HealthState, event: DeviceEvent, threshold: number): Transition {
  const after = next(current, event, threshold);
  const changed =
    after.state !== current.state ||
    after.consecutiveFailures !== current.consecutiveFailures ||
    after.quarantineReason !== current.quarantineReason;
  const effects: DeviceEffect[] = [];
  if (after.state !== current.state) {
    const reason = after.state === 'quarantined' ? after.quarantineReason : undefined;
    effects.push({
      type: 'state-changed',
      state: after.state,
      previous: current.state,
      ...(reason === undefined ? {} : { reason }),
    });
  }
  return { next: after, effects, changed };
}
