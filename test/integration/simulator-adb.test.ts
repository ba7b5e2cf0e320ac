/**
 * The simulator through the real adb server (Debian's adb, private port): connect, shell v1/v2,
 * exit codes, sync push/pull, exec-out, forwards to in-device listeners, concurrency, disconnect.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatedDevice, type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { freePort } from '../support/ports.ts';
import { waitFor } from '../support/wait-for.ts';
import { type AdbServer, startAdbServer } from './support/adb-server.ts';

let sim: Simulator;
let server: AdbServer;
let device: SimulatedDevice;
let dir: string;

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

async function shell(command: string, input?: Buffer) {
  return server.adb(['-s', device.serial, 'shell', command], input === undefined ? {} : { input });
}

/**
 * Connect to a local forward, send one newline-terminated request and collect the reply until the
 * device closes. (adb streams have no half-close: ending our side would close the whole stream.)
 */
function roundTrip(port: number, data: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.write(Buffer.concat([data, Buffer.from('\n')])));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sim-adb-'));
  sim = await startSimulator({ port: 0, count: 2 });
  device = sim.devices[0]!;
  server = await startAdbServer();
  await server.connect(device.address);
});

afterAll(async () => {
  await server?.stop();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('simulator through the real adb server', () => {
  it('shows up as a device with product, model and device from its banner', async () => {
    const out = (await server.adb(['devices', '-l'])).stdout.toString();
    const line = out.split('\n').find((l) => l.startsWith(`${device.serial} `));
    // adb replaces characters outside [A-Za-z0-9_.-] with '_' in these fields.
    const prop = (key: string): string => (device.android.bannerProps()[key] ?? '?').replace(/[^\w.-]/g, '_');
    expect(line).toMatch(/\sdevice\s/);
    expect(line).toContain(`product:${prop('ro.product.name')}`);
    expect(line).toContain(`model:${prop('ro.product.model')}`);
    expect(line).toContain(`device:${prop('ro.product.device')}`);
  });

  it('answers getprop over shell v2', async () => {
    const result = await shell('getprop ro.build.version.sdk');
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toBe(`${device.android.device.getprop('ro.build.version.sdk')}\n`);
    expect(result.stdout.toString()).toMatch(/^\d{2}\n$/);
  });

  it('carries real exit codes and separates stderr', async () => {
    expect((await shell('false; echo $?')).stdout.toString()).toBe('1\n');
    expect((await shell('exit 3')).code).toBe(3);
    const mixed = await shell('echo err >&2; echo out');
    expect(mixed.stdout.toString()).toBe('out\n');
    expect(mixed.stderr).toContain('err');
    const missing = await shell('no-such-tool');
    expect(missing.code).toBe(127);
    expect(missing.stderr).toContain('no-such-tool: inaccessible or not found');
  });

  it('round-trips 8 MiB through push and pull with equal sha256', async () => {
    const data = randomBytes(8 * 1024 * 1024);
    const local = join(dir, 'up.bin');
    const back = join(dir, 'down.bin');
    await writeFile(local, data);
    const push = await server.adb(['-s', device.serial, 'push', local, '/data/local/tmp/rt.bin']);
    expect(push.code, push.stderr).toBe(0);
    expect(sha256(device.android.fs.readFile('/data/local/tmp/rt.bin')!)).toBe(sha256(data));
    const pull = await server.adb(['-s', device.serial, 'pull', '/data/local/tmp/rt.bin', back]);
    expect(pull.code, pull.stderr).toBe(0);
    expect(sha256(await readFile(back))).toBe(sha256(data));
    expect((await shell('sha256sum /data/local/tmp/rt.bin')).stdout.toString()).toContain(sha256(data));
  });

  it('streams raw bytes through exec-out and large output through shell v2', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    device.android.fs.writeFile('/data/local/tmp/raw.bin', data);
    const execOut = await server.adb(['-s', device.serial, 'exec-out', 'cat /data/local/tmp/raw.bin']);
    expect(sha256(execOut.stdout)).toBe(sha256(data));
    const v2 = await shell('cat /data/local/tmp/raw.bin');
    expect(sha256(v2.stdout)).toBe(sha256(data));
  });

  it('reports a missing remote file on pull and lists directories', async () => {
    const pull = await server.adb(['-s', device.serial, 'pull', '/data/local/tmp/nope.bin', join(dir, 'x')]);
    expect(pull.code).not.toBe(0);
    // adb 29 prints this error on stdout.
    expect(pull.stdout.toString() + pull.stderr).toMatch(
      /failed to stat remote object.*No such file or directory/,
    );
    device.android.fs.writeFile('/data/local/tmp/listed.txt', Buffer.from('12345'));
    const ls = await server.adb(['-s', device.serial, 'ls', '/data/local/tmp']);
    expect(ls.stdout.toString()).toMatch(/^[0-9a-f]{8} 00000005 [0-9a-f]{8} listed\.txt$/m);
  });

  it('feeds adb stdin to the device process (shell v2 stdin packets and exec-in)', async () => {
    const input = Buffer.from('line one\nline two\n');
    const cat = await shell('cat', input);
    expect(cat.stdout.toString()).toBe(input.toString());
    const execIn = await server.adb(['-s', device.serial, 'exec-in', 'cat > /data/local/tmp/in.txt'], {
      input,
    });
    expect(execIn.code).toBe(0);
    // adb exits once it has sent stdin and closed its side; the device's `cat` may still be writing.
    const written = await waitFor(
      () => {
        const text = Buffer.from(device.android.fs.readFile('/data/local/tmp/in.txt') ?? []).toString();
        return text === input.toString() ? text : false;
      },
      { what: 'the device wrote exec-in stdin to /data/local/tmp/in.txt' },
    ).catch(() => Buffer.from(device.android.fs.readFile('/data/local/tmp/in.txt') ?? []).toString());
    expect(written).toBe(input.toString());
  });

  it('runs many adb shell commands concurrently', async () => {
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => shell(`echo stream-${i}`)));
    results.forEach((r, i) => {
      expect(r.code).toBe(0);
      expect(r.stdout.toString()).toBe(`stream-${i}\n`);
    });
  });

  it('forwards tcp: and localabstract: to listeners inside the device, lists and removes forwards', async () => {
    // Reads one line, answers it in upper case and closes.
    const echo = (socket: Duplex): void => {
      let text = '';
      socket.on('data', (c: Buffer) => {
        text += c.toString('utf8');
        const nl = text.indexOf('\n');
        if (nl >= 0) socket.end(text.slice(0, nl).toUpperCase());
      });
    };
    const tcpListener = device.android.device.listen({ tcp: 7100 }, echo);
    const abstractListener = device.android.device.listen({ abstract: 'bridge-test' }, echo);
    try {
      const [a, b] = [await freePort(), await freePort()];
      expect((await server.adb(['-s', device.serial, 'forward', `tcp:${a}`, 'tcp:7100'])).code).toBe(0);
      expect(
        (await server.adb(['-s', device.serial, 'forward', `tcp:${b}`, 'localabstract:bridge-test'])).code,
      ).toBe(0);
      expect((await roundTrip(a, Buffer.from('hello tcp'))).toString()).toBe('HELLO TCP');
      expect((await roundTrip(b, Buffer.from('hello abstract'))).toString()).toBe('HELLO ABSTRACT');
      const big = randomBytes(2 * 1024 * 1024).toString('hex');
      expect((await roundTrip(a, Buffer.from(big))).toString()).toBe(big.toUpperCase());

      const list = (await server.adb(['forward', '--list'])).stdout.toString();
      expect(list).toContain(`${device.serial} tcp:${a} tcp:7100`);
      expect(list).toContain(`${device.serial} tcp:${b} localabstract:bridge-test`);
      expect((await server.adb(['-s', device.serial, 'forward', '--remove', `tcp:${a}`])).code).toBe(0);
      const after = (await server.adb(['forward', '--list'])).stdout.toString();
      expect(after).not.toContain(`tcp:${a} `);
      expect(after).toContain(`tcp:${b} `);
    } finally {
      tcpListener.close();
      abstractListener.close();
      await server.adb(['-s', device.serial, 'forward', '--remove-all']);
    }
  });

  it('refuses a forward to a port nobody listens on inside the device', async () => {
    const port = await freePort();
    expect((await server.adb(['-s', device.serial, 'forward', `tcp:${port}`, 'tcp:7999'])).code).toBe(0);
    try {
      expect((await roundTrip(port, Buffer.from('anyone?'))).length).toBe(0);
    } finally {
      await server.adb(['-s', device.serial, 'forward', '--remove', `tcp:${port}`]);
    }
  });

  it('disconnects, and keeps the device state across a reconnect', async () => {
    const other = sim.devices[1]!;
    await server.connect(other.address);
    expect(
      (await server.adb(['-s', other.serial, 'shell', 'echo kept > /data/local/tmp/state.txt'])).code,
    ).toBe(0);
    const out = await server.adb(['disconnect', other.address]);
    expect(out.stdout.toString()).toContain(`disconnected ${other.address}`);
    await server.waitForState(other.serial, 'absent');
    await server.connect(other.address);
    const cat = await server.adb(['-s', other.serial, 'shell', 'cat /data/local/tmp/state.txt']);
    expect(cat.stdout.toString()).toBe('kept\n');
  });
});
