/**
 * The bridge's own adb server (real Debian adb on a private port): restart after a crash, adoption of
 * a leftover server from an earlier bridge (proven by its pid file), refusal of anyone else's server,
 * and a clean stop.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AdbServer, adbServerPidFile } from '../../src/adb/server.ts';
import { tempDir } from '../support/bridge.ts';
import { freePort } from '../support/device-bed.ts';
import { answers } from './support/adb-server.ts';

/** An adb server on `port` started by hand (as a previous bridge or another user would). */
async function leftoverServer(port: number): Promise<ChildProcess> {
  const child = spawn('adb', ['-P', String(port), 'server', 'nodaemon'], { stdio: 'ignore' });
  const until = Date.now() + 10_000;
  while (!(await answers(port)) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  return child;
}

describe('AdbServer', () => {
  it('never uses the default port 5037', () => {
    expect(() => new AdbServer({ port: 5037 })).toThrow(/5037/);
  });

  it('restarts its server after a crash and emits restarted', async () => {
    const server = new AdbServer({ port: await freePort(), backoffMs: 50 });
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

  it('adopts a leftover server its pid file proves a bridge started, replaces it when it dies, and stops cleanly', async () => {
    const port = await freePort();
    const state = await tempDir();
    const leftover = await leftoverServer(port);
    try {
      // What the killed bridge left: its server and the server's pid file in the data dir.
      writeFileSync(adbServerPidFile(state.dir, port), `${leftover.pid}\n`);
      const server = new AdbServer({ port, backoffMs: 50, stateDir: state.dir });
      await server.start();
      expect(server.pid).toBeUndefined();
      const restarted = new Promise((r) => server.once('restarted', r));
      leftover.kill('SIGKILL');
      await restarted;
      expect(server.pid).toBeDefined();
      expect(readFileSync(adbServerPidFile(state.dir, port), 'utf8').trim()).toBe(String(server.pid));
      expect(await answers(port)).toBe(true);
      await server.stop();
      expect(await answers(port)).toBe(false);
      expect(existsSync(adbServerPidFile(state.dir, port))).toBe(false);
    } finally {
      leftover.kill('SIGKILL');
      await state.cleanup();
    }
  });

  it('never adopts or stops a server it cannot prove it started: fails naming the port and the setting', async () => {
    const port = await freePort();
    const state = await tempDir();
    const foreign = await leftoverServer(port);
    try {
      for (const proof of ['none', 'dead pid', 'unrelated live pid'] as const) {
        if (proof === 'dead pid') writeFileSync(adbServerPidFile(state.dir, port), '999999999\n');
        if (proof === 'unrelated live pid')
          writeFileSync(adbServerPidFile(state.dir, port), `${process.pid}\n`);
        const server = new AdbServer({ port, stateDir: state.dir });
        const err = await server.start(5000).then(
          () => new Error('started'),
          (e: unknown) => e as Error,
        );
        expect(err.message, proof).toContain(`127.0.0.1:${port}`);
        expect(err.message, proof).toContain('DEVICEBRIDGE_ADB_PORT');
        expect((err as { code?: string }).code, proof).toBe('INVALID_ARGUMENT');
        await server.stop();
        expect(await answers(port), `${proof}: the other server still runs`).toBe(true);
      }
      // Without a data dir there is no proof either.
      await expect(new AdbServer({ port }).start(5000)).rejects.toThrow(/DEVICEBRIDGE_ADB_PORT/);
      expect(foreign.exitCode).toBeNull();
    } finally {
      foreign.kill('SIGKILL');
      await state.cleanup();
    }
  });

  it('fails fast with a clear message when adb is not installed', async () => {
    const server = new AdbServer({ port: await freePort(), adbPath: '/nonexistent/adb' });
    // The spawn's own error (ENOENT), not the 10 s readiness wait running out.
    await expect(server.start(10_000)).rejects.toThrow(/cannot start \/nonexistent\/adb.*ENOENT/);
    await server.stop();
  });
});
