/**
 * Helper session forwards from unix sockets (issue 16): on the bridge's own adb server (real Debian
 * adb) a session's forward is `localfilesystem:` in a private directory, and its commands connect
 * there; removal, reconcile (strays of a killed bridge, forwards the server lost) and the bridge's end
 * unlink the socket files adb leaves behind. A ledger without a socket directory (an external adb
 * server) keeps `tcp:`. Simulated devices over TCP; nothing mocked.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForwardLedger } from '../../src/adb/forward-ledger.ts';
import { filesystemSpecPath } from '../../src/adb/forward-target.ts';
import { SocketDir } from '../../src/adb/socket-dir.ts';
import { adbHelperDevice } from '../../src/helpers/snapshot/device.ts';
import { SnapshotDriver } from '../../src/helpers/snapshot/driver.ts';
import { EnsureVerdicts } from '../../src/helpers/snapshot/ensure-helper.ts';
import { type DeviceBed, fixtureApk, fixtureManifest, startDeviceBed } from '../support/device-bed.ts';

const HELPER = 'snapshot-helper-v2.apk';

describe('helper session forwards from unix sockets (real adb server)', () => {
  let bed: DeviceBed;
  const manifest = fixtureManifest(HELPER);
  const verdicts = new EnsureVerdicts();
  const driverOver = (ledger: ForwardLedger, owner: string) =>
    new SnapshotDriver(
      adbHelperDevice({ client: bed.client, serial: bed.sim.devices[0]!.serial, ledger, locks: bed.locks }),
      manifest,
      { verdicts, apk: fixtureApk(bed.cache, HELPER, manifest), owner },
    );

  beforeAll(async () => {
    bed = await startDeviceBed();
    await driverOver(bed.ledger, 'ensure').ensure();
  });
  afterAll(async () => bed?.close());

  it('a session forwards from a socket in a 0700 directory, answers through it, and leaves no file', async () => {
    const driver = driverOver(bed.ledger, 'lease-unix');
    const snap = await driver.snapshot({ transport: 'session' });
    expect(snap.transport).toBe('session');
    expect(snap.xml).toBe(bed.sim.devices[0]!.android.device.uiXml());
    const [entry] = bed.ledger.entries('lease-unix');
    const file = filesystemSpecPath(entry!.local);
    expect(file, entry!.local).toBeDefined();
    expect(statSync(path.dirname(file!)).mode & 0o777).toBe(0o700);
    expect(statSync(file!).isSocket()).toBe(true);
    expect((await bed.client.listForwards()).map((f) => f.local)).toContain(entry!.local);
    // Reused: a second command goes through the same socket.
    expect((await driver.snapshot({ transport: 'session' })).xml).toBe(snap.xml);
    expect(bed.ledger.entries('lease-unix')).toEqual([entry]);
    await driver.close();
    expect(await bed.client.listForwards()).toEqual([]);
    expect(existsSync(file!), 'the socket file adb leaves is unlinked').toBe(false);
  });

  it('a lease release removes its socket forwards and their files', async () => {
    const driver = driverOver(bed.ledger, 'lease-release');
    await driver.snapshot({ transport: 'session' });
    const file = filesystemSpecPath(bed.ledger.entries('lease-release')[0]!.local)!;
    const report = await bed.ledger.release('lease-release');
    expect(report.removed).toHaveLength(1);
    expect(existsSync(file)).toBe(false);
    await driver.close();
    expect(await bed.client.listForwards()).toEqual([]);
  });

  it('without a socket directory (an external adb server) the session forwards from tcp:', async () => {
    const tcpLedger = new ForwardLedger(bed.client, { ownsServer: false });
    const driver = driverOver(tcpLedger, 'lease-tcp');
    const snap = await driver.snapshot({ transport: 'session' });
    expect(snap.xml).toBe(bed.sim.devices[0]!.android.device.uiXml());
    expect(tcpLedger.entries('lease-tcp')[0]!.local).toMatch(/^tcp:\d+$/);
    await driver.close();
    expect(await bed.client.listForwards()).toEqual([]);
  });

  it('reconcile removes a killed bridge’s socket forward and its file, and unlinks what the server lost', async () => {
    const serial = bed.sim.devices[0]!.serial;
    // A bridge SIGKILLed with a session open left a forward and its socket directory behind.
    const killed = new SocketDir('devicebridge-forward-');
    const strayFile = await killed.next();
    await bed.client.forward(serial, `localfilesystem:${strayFile}`, 'tcp:9999');
    expect(existsSync(strayFile)).toBe(true);
    // A forward of this bridge the server lost (as after an adb server restart).
    const lost = await bed.ledger.openReachable('lease-lost', serial, 'tcp:9998');
    await bed.client.removeForward(serial, lost.local);
    const result = await bed.ledger.reconcile();
    expect(result.removedStrays).toEqual([`${serial} localfilesystem:${strayFile} tcp:9999`]);
    expect(result.forgotten.map((e) => e.local)).toEqual([lost.local]);
    expect(existsSync(strayFile)).toBe(false);
    expect(existsSync(path.dirname(strayFile)), 'the killed bridge’s emptied directory').toBe(false);
    expect(existsSync(filesystemSpecPath(lost.local)!)).toBe(false);
    expect(await bed.client.listForwards()).toEqual([]);
  });

  it('the bridge ending removes its socket directory', async () => {
    const sockets = new SocketDir('devicebridge-forward-');
    const ledger = new ForwardLedger(bed.client, { ownsServer: true, sockets });
    const entry = await ledger.openReachable('lease-end', bed.sim.devices[0]!.serial, 'tcp:9997');
    const dir = path.dirname(filesystemSpecPath(entry.local)!);
    expect(existsSync(dir)).toBe(true);
    await ledger.release('lease-end');
    await ledger.dispose();
    expect(existsSync(dir)).toBe(false);
  });
});
