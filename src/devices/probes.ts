/** What the registry asks a device over adb: its properties (`getprop`), a liveness probe, adb's view of it. */
import type { AdbClient } from '../adb/client.ts';
import { shellCommand } from '../adb/shell-quote.ts';
import type { Logger } from '../observability/logger.ts';
import { deviceStateFromAdb, type ObservedState } from './device-state.ts';
import { devicePropertiesFrom, parseGetprop } from './properties.ts';
import type { DeviceProperties } from './types.ts';

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The device's properties from one `getprop`; undefined when it cannot be read. */
export async function readProperties(
  client: AdbClient,
  serial: string,
  timeoutMs: number,
  logger?: Logger,
): Promise<DeviceProperties | undefined> {
  try {
    const result = await client.shell(serial, shellCommand('getprop'), {
      timeoutMs,
      maxOutputBytes: 1024 * 1024,
    });
    if (result.exitCode !== 0) return undefined;
    return devicePropertiesFrom(parseGetprop(result.stdout.toString('utf8')));
  } catch (err) {
    logger?.warn({ serial, err: message(err) }, 'getprop failed');
    return undefined;
  }
}

/** `echo ok` on the device: null when healthy, else why not. */
export async function probeDevice(
  client: AdbClient,
  serial: string,
  timeoutMs: number,
): Promise<string | null> {
  try {
    const result = await client.shell(serial, shellCommand('echo', 'ok'), { timeoutMs });
    if (result.exitCode === 0 && result.stdout.toString('utf8').trim() === 'ok') return null;
    return `probe "echo ok" answered exit ${result.exitCode}: ${JSON.stringify(result.stdout.toString('utf8').slice(0, 80))}`;
  } catch (err) {
    return `probe "echo ok" failed: ${message(err)}`;
  }
}

/** The state adb reports for a serial right now (no probe); offline when adb does not answer. */
export async function observeState(
  client: AdbClient,
  serial: string,
  timeoutMs: number,
): Promise<ObservedState> {
  try {
    const devices = await client.devices({ timeoutMs });
    return deviceStateFromAdb(devices.find((d) => d.serial === serial)?.state);
  } catch {
    return 'offline';
  }
}
