/**
 * The adb endpoint's relay, end to end with real adb on both sides: a simulated device behind the
 * bridge's own adb server, and the client's own adb (a second server, its own fresh key) that
 * `adb connect`s to the endpoint and runs shell, push/pull and install through it.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAdbPublicKey } from '../../src/adb/adb-public-key.ts';
import { AdbRelayEndpoints } from '../../src/adb/relay-endpoints.ts';
import { fixture } from '../support/bridge.ts';
import { type ClientAdb, startClientAdb } from '../support/client-adb.ts';
import { type DeviceBed, startDeviceBed } from '../support/device-bed.ts';

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

  it('adb reverse through the endpoint is refused with a message the adb client prints', async () => {
    const opened = await endpoints.open({
      owner: 'lease-5',
      serial: bed.sim.devices[0]!.serial,
      deviceId: 'sim-1',
      key: parseAdbPublicKey(client.publicKey),
    });
    expect(await connected(client, opened.endpoint)).toBe('device');
    const reverse = await client.adb(['-s', opened.endpoint, 'reverse', 'tcp:9125', 'tcp:9126']);
    expect(reverse.code).not.toBe(0);
    expect(reverse.stderr).toContain('adb reverse is not available through a lease endpoint');
    // The connection stays usable.
    const shell = await client.adb(['-s', opened.endpoint, 'shell', 'echo', 'still']);
    expect(shell.stdout.trim()).toBe('still');
    await endpoints.close('lease-5');
    await client.adb(['disconnect', opened.endpoint]);
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
});
