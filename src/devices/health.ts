/**
 * Device health: what one health pass concludes about a device (a state-machine event for
 * `device-state.ts`, and what to do about its tunnel), and the periodic loop that runs the passes.
 */
import type { DeviceEvent } from './device-state.ts';
import { deviceStateFromAdb } from './device-state.ts';
import type { DeviceRecord } from './types.ts';

/** What to do about a record's tunnel in a pass: add it (not tracked here: a restart), re-connect, or nothing. */
export function tunnelAction(
  record: Pick<DeviceRecord, 'endpoint' | 'serial'>,
  tracked: boolean,
  adb: ReadonlyMap<string, string> | null,
): 'add' | 'reconnect' | null {
  if (record.endpoint === undefined) return null;
  if (!tracked) return 'add';
  // Tracked, but adb no longer lists it (its server changed under us).
  if (adb !== null && !adb.has(record.serial)) return 'reconnect';
  return null;
}

/**
 * The event one pass observes for a record. `adb`: the adb server's device list, null when it did
 * not answer (not the device's failure: uncounted offline). `tunnelState`: the tunnel manager's
 * state of the endpoint. `probe`: the liveness probe, run only for a device adb calls online.
 */
export async function healthEvent(
  record: Pick<DeviceRecord, 'endpoint' | 'serial'>,
  adb: ReadonlyMap<string, string> | null,
  tunnelState: string | undefined,
  probe: () => Promise<string | null>,
): Promise<DeviceEvent> {
  if (adb === null) return { type: 'observed', observed: 'offline', count: false };
  let observed = deviceStateFromAdb(adb.get(record.serial));
  // Between the tunnel manager's re-handshakes of an unauthorized device: still unauthorized.
  if (observed === 'offline' && record.endpoint !== undefined && tunnelState === 'unauthorized') {
    observed = 'unauthorized';
  }
  if (observed === 'offline') {
    return {
      type: 'observed',
      observed,
      count: true,
      failure: `adb reports ${adb.get(record.serial) ?? 'no such device'}`,
    };
  }
  if (observed === 'online') {
    const failure = await probe();
    if (failure !== null) return { type: 'observed', observed: 'offline', count: true, failure };
  }
  return { type: 'observed', observed, count: true };
}
