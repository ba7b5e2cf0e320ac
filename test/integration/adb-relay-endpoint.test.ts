/**
 * The adb endpoint's relay, end to end with real adb on both sides: a simulated device behind the
 * bridge's own adb server, and the client's own adb (a second server, its own fresh key) that
 * `adb connect`s to the endpoint and runs shell, push/pull and install through it.
 */
import { randomBytes } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAdbPublicKey } from '../../src/adb/adb-public-key.ts';
import { AdbRelayEndpoints } from '../../src/adb/relay-endpoints.ts';
import { fixture } from '../support/bridge.ts';
import { type ClientAdb, startClientAdb } from '../support/client-adb.ts';
import { type DeviceBed, startDeviceBed } from '../support/device-bed.ts';
import { roundTrip, startEchoServer } from '../support/echo-server.ts';

let bed: DeviceBed;
let client: ClientAdb;
let stranger: ClientAdb;
let endpoints: AdbRelayEndpoints;

beforeAll(async () => {
  bed = await startDeviceBed();
  [client, stranger] = await Promise.all([startClientAdb(), startClientAdb()]);
  endpoints = new AdbRelayEndpoints({
    client: bed.client,
    bindHost: '127.0.0.1',
    advertisedHost: '127.0.0.1',
    ports: '0',
  });
}, 60_000);

afterAll(async () => {
  await endpoints?.closeAll();
  await Promise.all([client?.close(), stranger?.close()]);
  await bed?.close();
}, 60_000);

async function connected(who: ClientAdb, endpoint: string): Promise<string> {
  const result = await who.adb(['connect', endpoint]);
  // Let the client's server finish the handshake, then report the device's state.
  for (let i = 0; i < 50; i++) {
    const state = await who.adb(['-s', endpoint, 'get-state']);
    if (state.code === 0 && state.stdout.trim() === 'device') return 'device';
    if (/unauthorized/.test(state.stderr) && i > 10) return 'unauthorized';
    await new Promise((r) => setTimeout(r, 100));
  }
  return `not online: ${result.stdout} ${result.stderr}`;
}

/** Whether something accepts connections on the unix socket at `file`. */
function listensOnPath(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ path: file });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** The device's own reverse list (`reverse:list-forward` through the bridge's adb server). */
async function deviceReverses(serial: string): Promise<string> {
  const onDevice = await bed.client.openService(serial, 'reverse:list-forward');
  return new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    onDevice.on('data', (b: Buffer) => chunks.push(b));
    onDevice.once('close', () => resolve(Buffer.concat(chunks).toString()));
    onDevice.resume();
  });
}

describe('adb endpoint relay (real adb client)', () => {
  it('adb connect with the registered key, then shell, push/pull and install', async () => {
    const serial = bed.sim.devices[0]!.serial;
    const opened = await endpoints.open({
      owner: 'lease-1',
      serial,
      deviceId: 'sim-1',
      key: parseAdbPublicKey(client.publicKey),
    });
    expect(opened.endpoint).toBe(`127.0.0.1:${opened.port}`);
    expect(await connected(client, opened.endpoint)).toBe('device');

    const echo = await client.adb(['-s', opened.endpoint, 'shell', 'echo', 'hello', 'relay']);
    expect(echo.stdout).toBe('hello relay\n');
    const failing = await client.adb(['-s', opened.endpoint, 'shell', 'exit 3']);
    expect(failing.code).toBe(3);
    // `shell:` (v1, -x) and `exec:` (exec-out) are relayed too.
    expect((await client.adb(['-s', opened.endpoint, 'shell', '-x', 'echo', 'v1'])).stdout).toBe('v1\n');
    expect((await client.adb(['-s', opened.endpoint, 'exec-out', 'echo', 'raw'])).stdout).toBe('raw\n');

    // push/pull: bytes larger than one payload survive the round trip.
    const local = path.join(client.home, 'blob.bin');
    const back = path.join(client.home, 'blob-back.bin');
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    await writeFile(local, bytes);
    const push = await client.adb(['-s', opened.endpoint, 'push', local, '/data/local/tmp/blob.bin'], 60_000);
    expect(push.code, push.stderr).toBe(0);
    const pull = await client.adb(['-s', opened.endpoint, 'pull', '/data/local/tmp/blob.bin', back], 60_000);
    expect(pull.code, pull.stderr).toBe(0);
    expect((await readFile(back)).equals(bytes)).toBe(true);

    const install = await client.adb([
      '-s',
      opened.endpoint,
      'install',
      '-r',
      '-t',
      fixture('plain-app.apk'),
    ]);
    expect(install.stdout + install.stderr).toMatch(/Success/);
    const packages = await client.adb(['-s', opened.endpoint, 'shell', 'pm', 'list', 'packages']);
    expect(packages.stdout).toMatch(/package:com\.devicebridge\.fixture\.plain/);
    // The install really reached the device behind the bridge.
    expect((await bed.client.shell(serial, 'pm list packages')).stdout.toString()).toMatch(
      /com\.devicebridge\.fixture\.plain/,
    );
  }, 120_000);

  it('a different key is refused: the device stays unauthorized and no stream opens', async () => {
    const opened = await endpoints.open({
      owner: 'lease-2',
      serial: bed.sim.devices[0]!.serial,
      deviceId: 'sim-1',
      key: parseAdbPublicKey(client.publicKey),
    });
    expect(await connected(stranger, opened.endpoint)).not.toBe('device');
    const shell = await stranger.adb(['-s', opened.endpoint, 'shell', 'echo', 'nope']);
    expect(shell.code).not.toBe(0);
    expect(shell.stdout).not.toMatch(/nope/);
    await stranger.adb(['disconnect', opened.endpoint]);
  }, 60_000);

  it('adb forward through the endpoint reaches a socket inside the device; closing ends it', async () => {
    const device = bed.sim.devices[0]!;
    const inside = new Set<import('node:stream').Duplex>();
    const listener = device.android.device.listen({ tcp: 9123 }, (socket: import('node:stream').Duplex) => {
      inside.add(socket);
      socket.on('data', (b: Buffer) => socket.write(Buffer.concat([Buffer.from('echo:'), b])));
      socket.on('error', () => undefined);
      // adbd ends the in-device socket when the stream closes (CLSE).
      socket.once('end', () => inside.delete(socket));
    });
    try {
      const opened = await endpoints.open({
        owner: 'lease-4',
        serial: device.serial,
        deviceId: 'sim-1',
        key: parseAdbPublicKey(client.publicKey),
      });
      expect(await connected(client, opened.endpoint)).toBe('device');
      const fwd = await client.adb(['-s', opened.endpoint, 'forward', 'tcp:0', 'tcp:9123']);
      expect(fwd.code, fwd.stderr).toBe(0);
      const localPort = Number(fwd.stdout.trim());
      const socket = net.connect({ host: '127.0.0.1', port: localPort });
      socket.on('error', () => undefined);
      const reply = await new Promise<string>((resolve) => {
        socket.once('data', (b: Buffer) => resolve(b.toString()));
        socket.write('ping');
        setTimeout(() => resolve('timeout'), 5000);
      });
      expect(reply).toBe('echo:ping');
      expect(inside.size).toBe(1);
      await endpoints.close('lease-4');
      // The relayed stream is gone on the device side, and the client's socket is ended.
      for (let i = 0; i < 50 && inside.size > 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(inside.size).toBe(0);
      const ended = await new Promise<boolean>((resolve) => {
        if (socket.destroyed || socket.readableEnded) resolve(true);
        socket.once('close', () => resolve(true));
        setTimeout(() => resolve(false), 5000);
      });
      expect(ended).toBe(true);
      await client.adb(['forward', '--remove-all']);
    } finally {
      listener.close();
    }
  }, 60_000);

  it('adb reverse through the endpoint: a device-side connection to X reaches the client on Y; list, remove, teardown', async () => {
    const device = bed.sim.devices[0]!;
    const android = device.android;
    const echo = await startEchoServer();
    try {
      const opened = await endpoints.open({
        owner: 'lease-5',
        serial: device.serial,
        deviceId: 'sim-1',
        key: parseAdbPublicKey(client.publicKey),
      });
      expect(await connected(client, opened.endpoint)).toBe('device');
      const set = await client.adb(['-s', opened.endpoint, 'reverse', 'tcp:9125', `tcp:${echo.port}`]);
      expect(set.code, set.stderr).toBe(0);
      // On the device, the reverse points at a bridge-local listener on loopback, not at Y.
      const deviceList = await deviceReverses(device.serial);
      // Not a loopback TCP port (any local process could connect to it) but a unix socket in a
      // directory only the bridge's user can enter.
      expect(deviceList).not.toMatch(/tcp:9125 tcp:/);
      const bridgeSocket = /tcp:9125 localfilesystem:(\S+)/.exec(deviceList)?.[1] ?? '';
      expect(path.isAbsolute(bridgeSocket), deviceList).toBe(true);
      expect((await stat(bridgeSocket)).isSocket()).toBe(true);
      const dir = await stat(path.dirname(bridgeSocket));
      expect(dir.mode & 0o777).toBe(0o700);
      expect(dir.uid).toBe(process.getuid?.());
      expect(await listensOnPath(bridgeSocket)).toBe(true);

      // An app on the device connects to its port 9125: the bytes reach the client's localhost:Y.
      // (The probe above reached it too: any connection to the bridge-local listener is relayed.)
      for (let i = 0; i < 50 && echo.accepted() < 1; i++) await new Promise((r) => setTimeout(r, 50));
      const acceptedBefore = echo.accepted();
      const app = android.connect({ tcp: 9125 });
      expect(app).toBeDefined();
      expect(await roundTrip(app!, 'ping')).toBe('echo:ping');
      const big = 'x'.repeat(300_000);
      const collected = await new Promise<number>((resolve) => {
        let n = 0;
        app!.on('data', (b: Buffer) => {
          n += b.length;
          if (n >= big.length + 5) resolve(n);
        });
        app!.write(big);
        setTimeout(() => resolve(n), 10_000);
      });
      expect(collected).toBeGreaterThanOrEqual(big.length + 5);
      expect(echo.accepted()).toBe(acceptedBefore + 1);

      const list = await client.adb(['-s', opened.endpoint, 'reverse', '--list']);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toContain(`tcp:9125 tcp:${echo.port}`);
      expect(list.stdout).not.toContain('localfilesystem');

      const bad = await client.adb(['-s', opened.endpoint, 'reverse', 'tcp:9127', 'localabstract:x']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('tcp: specs only');

      const second = await client.adb(['-s', opened.endpoint, 'reverse', 'tcp:9126', `tcp:${echo.port}`]);
      expect(second.code, second.stderr).toBe(0);
      const remove = await client.adb(['-s', opened.endpoint, 'reverse', '--remove', 'tcp:9126']);
      expect(remove.code, remove.stderr).toBe(0);
      expect(android.listening()).not.toContain('tcp:9126');
      const missing = await client.adb(['-s', opened.endpoint, 'reverse', '--remove', 'tcp:9126']);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toMatch(/not found/);
      const third = await client.adb(['-s', opened.endpoint, 'reverse', 'tcp:9128', `tcp:${echo.port}`]);
      expect(third.code, third.stderr).toBe(0);
      const all = await client.adb(['-s', opened.endpoint, 'reverse', '--remove-all']);
      expect(all.code, all.stderr).toBe(0);
      expect(android.listening()).not.toContain('tcp:9128');
      expect(android.listening()).not.toContain('tcp:9125');
      expect(await listensOnPath(bridgeSocket)).toBe(false);
      for (const port of [9125, 9129]) {
        const again = await client.adb(['-s', opened.endpoint, 'reverse', `tcp:${port}`, `tcp:${echo.port}`]);
        expect(again.code, again.stderr).toBe(0);
      }

      // Teardown: the reverses on the device and the bridge-local listeners are gone.
      const lines = await endpoints.close('lease-5');
      expect(lines).toEqual([expect.stringMatching(/ 2 reverse\(s\) removed\)$/)]);
      expect(android.listening()).not.toContain('tcp:9125');
      expect(android.listening()).not.toContain('tcp:9129');
      expect(android.connect({ tcp: 9125 })).toBeUndefined();
      await client.adb(['disconnect', opened.endpoint]);
    } finally {
      await echo.close();
    }
  }, 90_000);

  it('a client that disconnects takes its reverses with it', async () => {
    const device = bed.sim.devices[0]!;
    const opened = await endpoints.open({
      owner: 'lease-6',
      serial: device.serial,
      deviceId: 'sim-1',
      key: parseAdbPublicKey(client.publicKey),
    });
    expect(await connected(client, opened.endpoint)).toBe('device');
    const set = await client.adb(['-s', opened.endpoint, 'reverse', 'tcp:9131', 'tcp:9132']);
    expect(set.code, set.stderr).toBe(0);
    expect(device.android.listening()).toContain('tcp:9131');
    await client.adb(['disconnect', opened.endpoint]);
    for (let i = 0; i < 50 && device.android.listening().includes('tcp:9131'); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(device.android.listening()).not.toContain('tcp:9131');
    await endpoints.close('lease-6');
  }, 60_000);

  it('two client connections reversing the same device port: the later one holds it, the earlier one leaving does not remove it', async () => {
    const device = bed.sim.devices[0]!;
    const second = await startClientAdb({ sameKeyAs: client });
    const echoA = await startEchoServer();
    const echoB = await startEchoServer();
    try {
      const opened = await endpoints.open({
        owner: 'lease-8',
        serial: device.serial,
        deviceId: 'sim-1',
        key: parseAdbPublicKey(client.publicKey),
      });
      expect(await connected(client, opened.endpoint)).toBe('device');
      expect(await connected(second, opened.endpoint)).toBe('device');
      const a = await client.adb(['-s', opened.endpoint, 'reverse', 'tcp:9151', `tcp:${echoA.port}`]);
      expect(a.code, a.stderr).toBe(0);
      const b = await second.adb(['-s', opened.endpoint, 'reverse', 'tcp:9151', `tcp:${echoB.port}`]);
      expect(b.code, b.stderr).toBe(0);
      // The device reaches the later client, as adbd's rebind would.
      const first = device.android.connect({ tcp: 9151 });
      expect(await roundTrip(first!, 'one')).toBe('echo:one');
      for (let i = 0; i < 50 && echoB.accepted() < 1; i++) await new Promise((r) => setTimeout(r, 50));
      expect(echoB.accepted()).toBe(1);
      expect(echoA.accepted()).toBe(0);
      // The earlier client's list no longer shows what it lost.
      expect((await client.adb(['-s', opened.endpoint, 'reverse', '--list'])).stdout).not.toContain(
        'tcp:9151',
      );
      // A reverse only the earlier client holds, taken after it lost tcp:9151: its connection's
      // reverses are removed in the order they were taken, so once this one is gone, a removal of
      // tcp:9151 by that connection would have happened too.
      const own = await client.adb(['-s', opened.endpoint, 'reverse', 'tcp:9152', `tcp:${echoA.port}`]);
      expect(own.code, own.stderr).toBe(0);
      // The earlier client disconnects: the device's reverse (now the later client's) stays.
      await client.adb(['disconnect', opened.endpoint]);
      for (let i = 0; i < 50 && device.android.listening().includes('tcp:9152'); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(device.android.listening()).not.toContain('tcp:9152');
      expect(device.android.listening()).toContain('tcp:9151');
      const again = device.android.connect({ tcp: 9151 });
      expect(again).toBeDefined();
      expect(await roundTrip(again!, 'two')).toBe('echo:two');
      expect(echoB.accepted()).toBe(2);
      expect(await deviceReverses(device.serial)).toMatch(/tcp:9151 localfilesystem:/);
      const lines = await endpoints.close('lease-8');
      expect(lines).toEqual([expect.stringMatching(/ 1 reverse\(s\) removed\)$/)]);
      expect(device.android.listening()).not.toContain('tcp:9151');
      await second.adb(['disconnect', opened.endpoint]);
    } finally {
      await Promise.all([echoA.close(), echoB.close(), second.close()]);
    }
  }, 90_000);

  it('with the adb server on another host, adb reverse fails with the configured reason and nothing listens', async () => {
    const remote = new AdbRelayEndpoints({
      client: bed.client,
      bindHost: '127.0.0.1',
      advertisedHost: '127.0.0.1',
      ports: '0',
      reverseRefusal: 'devicebridge: adb reverse needs the bridge adb server on its own host',
    });
    const device = bed.sim.devices[0]!;
    const opened = await remote.open({
      owner: 'lease-7',
      serial: device.serial,
      deviceId: 'sim-1',
      key: parseAdbPublicKey(client.publicKey),
    });
    try {
      expect(await connected(client, opened.endpoint)).toBe('device');
      const set = await client.adb(['-s', opened.endpoint, 'reverse', 'tcp:9141', 'tcp:9142']);
      expect(set.code).not.toBe(0);
      expect(set.stderr).toContain('adb reverse needs the bridge adb server on its own host');
      expect(device.android.listening()).not.toContain('tcp:9141');
    } finally {
      await client.adb(['disconnect', opened.endpoint]);
      await remote.closeAll();
    }
  }, 60_000);

  it('closing the owner closes the endpoint: connections refused, streams gone', async () => {
    const opened = await endpoints.open({
      owner: 'lease-3',
      serial: bed.sim.devices[0]!.serial,
      deviceId: 'sim-1',
      key: parseAdbPublicKey(client.publicKey),
    });
    expect(await connected(client, opened.endpoint)).toBe('device');
    const lines = await endpoints.close('lease-3');
    expect(lines).toEqual([expect.stringMatching(new RegExp(`closed adb endpoint ${opened.endpoint}`))]);
    expect(endpoints.list('lease-3')).toEqual([]);
    const refused = await new Promise<string>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port: opened.port });
      s.once('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    const shell = await client.adb(['-s', opened.endpoint, 'shell', 'echo', 'late']);
    expect(shell.stdout).not.toMatch(/late/);
  }, 60_000);

  it("a tenant at its quota of open endpoints is refused a new one (429 naming it); another tenant's opens", async () => {
    const serial = bed.sim.devices[0]!.serial;
    const key = parseAdbPublicKey(client.publicKey);
    const quota = { tenant: 'acme', limit: 1 };
    const first = await endpoints.open({ owner: 'lease-q1', serial, deviceId: 'sim-1', key, quota });
    try {
      // The same key on the same lease answers the open endpoint (not a new one).
      expect((await endpoints.open({ owner: 'lease-q1', serial, deviceId: 'sim-1', key, quota })).port).toBe(
        first.port,
      );
      await expect(
        endpoints.open({ owner: 'lease-q2', serial, deviceId: 'sim-1', key, quota }),
      ).rejects.toMatchObject({ code: 'RATE_LIMITED', details: { quota: 'adbEndpoints', limit: 1 } });
      const other = await endpoints.open({
        owner: 'lease-q3',
        serial,
        deviceId: 'sim-1',
        key,
        quota: { tenant: 'globex', limit: 1 },
      });
      expect(other.port).not.toBe(first.port);
      // Closed, the tenant's place is free again.
      await endpoints.close('lease-q1');
      await endpoints.open({ owner: 'lease-q2', serial, deviceId: 'sim-1', key, quota });
    } finally {
      for (const owner of ['lease-q1', 'lease-q2', 'lease-q3']) await endpoints.close(owner);
    }
  }, 60_000);
  it('concurrent opens: a failed open gives its place back; the same key at once is one endpoint', async () => {
    const serial = bed.sim.devices[0]!.serial;
    const key = parseAdbPublicKey(client.publicKey);
    const quota = { tenant: 'initech', limit: 1 };
    try {
      // Opens for a device the adb server does not know fail (real adb answers); none keeps a place.
      const failed = await Promise.allSettled(
        ['lease-f1', 'lease-f2', 'lease-f3'].map((owner) =>
          endpoints.open({ owner, serial: 'no-such-device', deviceId: 'sim-x', key, quota }),
        ),
      );
      expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
      // The first failed at adb (its place taken), the others met the quota it held meanwhile.
      expect((failed[0] as PromiseRejectedResult).reason).not.toMatchObject({ code: 'RATE_LIMITED' });
      for (const r of failed.slice(1))
        expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'RATE_LIMITED' });
      const [a, b] = await Promise.all([
        endpoints.open({ owner: 'lease-f4', serial, deviceId: 'sim-1', key, quota }),
        endpoints.open({ owner: 'lease-f4', serial, deviceId: 'sim-1', key, quota }),
      ]);
      expect(b.port).toBe(a.port);
      expect(endpoints.list('lease-f4')).toHaveLength(1);
    } finally {
      for (const owner of ['lease-f1', 'lease-f2', 'lease-f3', 'lease-f4']) await endpoints.close(owner);
    }
  }, 60_000);
});
