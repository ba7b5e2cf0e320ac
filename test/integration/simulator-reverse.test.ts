/**
 * The simulator answers `adb reverse` as adbd does: the real adb client, through the bridge's own adb
 * server, sets a reverse; an in-device connection to port X (as an app would make) reaches the
 * host's localhost:Y; list, remove and remove-all; the reverses go with the transport.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runProcess } from '../support/cli.ts';
import { type DeviceBed, startDeviceBed } from '../support/device-bed.ts';
import { type EchoServer, roundTrip, startEchoServer } from '../support/echo-server.ts';

let bed: DeviceBed;
let echo: EchoServer;

beforeAll(async () => {
  bed = await startDeviceBed();
  echo = await startEchoServer();
}, 60_000);

afterAll(async () => {
  await echo?.close();
  await bed?.close();
}, 60_000);

function adb(args: string[]): Promise<CliResult> {
  const serial = bed.sim.devices[0]!.serial;
  return runProcess('adb', ['-P', String(bed.server.port), '-s', serial, ...args], { timeoutMs: 20_000 });
}

describe('simulator adb reverse (real adb client)', () => {
  it('reverse tcp:X tcp:Y: an in-device connection to X reaches the host on Y; list and remove', async () => {
    const android = bed.sim.devices[0]!.android;
    const set = await adb(['reverse', 'tcp:9310', `tcp:${echo.port}`]);
    expect(set.code, set.stderr).toBe(0);
    expect(android.listening()).toContain('tcp:9310');

    const socket = android.connect({ tcp: 9310 });
    expect(socket).toBeDefined();
    expect(await roundTrip(socket!, 'ping')).toBe('echo:ping');
    expect(await roundTrip(socket!, 'again')).toBe('echo:again');
    socket!.destroy();

    const list = await adb(['reverse', '--list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(`tcp:9310 tcp:${echo.port}`);

    const norebind = await adb(['reverse', '--no-rebind', 'tcp:9310', 'tcp:1']);
    expect(norebind.code).not.toBe(0);
    expect(norebind.stderr).toMatch(/cannot rebind/);

    const any = await adb(['reverse', 'tcp:0', `tcp:${echo.port}`]);
    expect(any.code, any.stderr).toBe(0);
    const chosen = Number(any.stdout.trim());
    expect(chosen).toBeGreaterThan(0);
    expect(android.listening()).toContain(`tcp:${chosen}`);

    const remove = await adb(['reverse', '--remove', 'tcp:9310']);
    expect(remove.code, remove.stderr).toBe(0);
    expect(android.listening()).not.toContain('tcp:9310');
    expect(android.connect({ tcp: 9310 })).toBeUndefined();
    const missing = await adb(['reverse', '--remove', 'tcp:9310']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/not found/);

    const all = await adb(['reverse', '--remove-all']);
    expect(all.code, all.stderr).toBe(0);
    expect(android.listening()).not.toContain(`tcp:${chosen}`);
    expect((await adb(['reverse', '--list'])).stdout.trim()).toBe('');
  }, 60_000);

  it('refuses a local spec that is not tcp:, and a host that refuses the connection closes the app socket', async () => {
    const bad = await adb(['reverse', 'localabstract:foo', `tcp:${echo.port}`]);
    expect(bad.code).not.toBe(0);
    const android = bed.sim.devices[0]!.android;
    // Nothing listens on the host's port 1: the host answers the device's OPEN with CLSE.
    const set = await adb(['reverse', 'tcp:9311', 'tcp:1']);
    expect(set.code, set.stderr).toBe(0);
    const socket = android.connect({ tcp: 9311 })!;
    expect(await roundTrip(socket, 'x')).toBe('closed');
    await adb(['reverse', '--remove-all']);
  }, 60_000);
});
