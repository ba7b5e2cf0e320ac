/**
 * The bridge's own adb server (real Debian adb on a private port): restart after a crash, adoption of
 * a leftover server from an earlier bridge, and a clean stop.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { AdbServer } from '../../src/adb/server.ts';
import { freePortCandidate } from '../support/device-bed.ts';
import { answers } from './support/adb-server.ts';

describe('AdbServer', () => {
  it('never uses the default port 5037', () => {
    expect(() => new AdbServer({ port: 5037 })).toThrow(/5037/);
  });

  it('restarts its server after a crash and emits restarted', async () => {
    const server = new AdbServer({ port: freePortCandidate(), backoffMs: 50 });
    await server.start();
    try {
      const first = server.pid!;
      const restarted = new Promise((r) => server.once('restarted', r));
      process.kill(first, 'SIGKILL');
      await restarted;
      expect(server.pid).toBeDefined();
      expect(server.pid).not.toBe(first);
      expect(await answers(server.port)).toBe(true);
    } finally {
      await server.stop();
    }
    expect(await answers(server.port)).toBe(false);
  });

  it('adopts a leftover server on its private port, replaces it when it dies, and stops cleanly', async () => {
    const port = freePortCandidate();
    const leftover = spawn('adb', ['-P', String(port), 'server', 'nodaemon'], { stdio: 'ignore' });
    try {
      const until = Date.now() + 10_000;
      while (!(await answers(port)) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      const server = new AdbServer({ port, backoffMs: 50 });
      await server.start();
      expect(server.pid).toBeUndefined();
      const restarted = new Promise((r) => server.once('restarted', r));
      leftover.kill('SIGKILL');
      await restarted;
      expect(server.pid).toBeDefined();
      expect(await answers(port)).toBe(true);
      await server.stop();
      expect(await answers(port)).toBe(false);
    } finally {
      leftover.kill('SIGKILL');
    }
  });

  it('fails fast with a clear message when adb is not installed', async () => {
    const server = new AdbServer({ port: freePortCandidate(), adbPath: '/nonexistent/adb' });
    const started = Date.now();
    await expect(server.start(10_000)).rejects.toThrow(/cannot start \/nonexistent\/adb.*ENOENT/);
    expect(Date.now() - started).toBeLessThan(5000);
    await server.stop();
  });
});
