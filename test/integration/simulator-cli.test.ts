/** `devicebridge simulate` as a user runs it: devices reachable by the real adb server, clean exit on signals. */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdbServer, startAdbServer } from './support/adb-server.ts';

const BIN = new URL('../../src/cli/bin.js', import.meta.url).pathname;

let server: AdbServer;

beforeAll(async () => {
  server = await startAdbServer();
});

afterAll(async () => {
  await server?.stop();
});

function simulate(args: string[]) {
  const child = spawn(process.execPath, [BIN, 'simulate', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return { child, exited, lines, stderr: () => stderr };
}

describe('devicebridge simulate', () => {
  it('prints one JSON line per device, serves adb, and exits 0 on SIGINT', async () => {
    const run = simulate(['--port', '0', '--count', '2', '--json', '--fault', 'latency-ms=1']);
    try {
      const devices: Array<{ address: string; serial: string }> = [];
      for (let i = 0; i < 2; i++) {
        const line = await run.lines.next();
        expect(line.done, run.stderr()).toBe(false);
        devices.push(JSON.parse(line.value as string));
      }
      for (const d of devices) {
        expect(d.address).toMatch(/^127\.0\.0\.1:\d+$/);
        expect(d.serial).toBe(d.address);
      }
      await server.connect(devices[1]!.address);
      const out = await server.adb(['-s', devices[1]!.serial, 'shell', 'echo from-cli']);
      expect(out.stdout.toString()).toBe('from-cli\n');
      await server.adb(['disconnect', devices[1]!.address]);
    } finally {
      run.child.kill('SIGINT');
    }
    expect(await run.exited).toBe(0);
  });

  it('exits 2 with a message naming the bad flag', async () => {
    const bad = simulate(['--fault', 'install-failure=oops']);
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toContain('invalid --fault "install-failure=oops"');
    const count = simulate(['--count', '0']);
    expect(await count.exited).toBe(2);
    expect(count.stderr()).toContain('--count must be between 1 and 256');
  });

  it('exits 2 when the port is taken', async () => {
    const first = simulate(['--port', '0', '--json']);
    try {
      const line = await first.lines.next();
      const port = (JSON.parse(line.value as string) as { address: string }).address.split(':')[1]!;
      const second = simulate(['--port', port]);
      expect(await second.exited).toBe(2);
      expect(second.stderr()).toContain('EADDRINUSE');
    } finally {
      first.child.kill('SIGTERM');
    }
    expect(await first.exited).toBe(0);
  });
});
