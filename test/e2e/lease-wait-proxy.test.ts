/**
 * Long lease waits behind a load balancer (issue #12): `devicebridge lease acquire --wait` through a
 * real TCP proxy that cuts any connection idle for 1.5 s (a load balancer's idle timeout). The CLI
 * uses the re-poll protocol (each request waits at most --poll seconds, then resumes its place in the
 * queue under its own waiter id), says where it stands on stderr, and gets the device when it frees.
 * `devicebridge lease waiters --json` lists the wait meanwhile.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceBridgeClient } from '../../src/client/index.ts';
import { tempDir } from '../support/bridge.ts';
import { BIN, runCli, startCli, waitForExit } from '../support/cli.ts';
import { freePort } from '../support/device-bed.ts';
import { type TcpRelay, tcpRelay } from '../support/tcp-relay.ts';

const IDLE_MS = 1500;

describe('lease acquire --wait behind a load balancer idle timeout', () => {
  let tmp: { dir: string; cleanup(): Promise<void> };
  let server: Awaited<ReturnType<typeof startCli>>;
  // A load balancer with an idle timeout: a connection idle (no byte either way) for IDLE_MS is cut.
  let proxy: TcpRelay;
  let direct: DeviceBridgeClient;

  beforeAll(async () => {
    tmp = await tempDir();
    server = await startCli(['serve', '--port', '0', '--data-dir', tmp.dir, '--simulate', '1', '--json'], {
      env: { DEVICEBRIDGE_ADB_PORT: String(await freePort()), LOG_LEVEL: 'silent' },
    });
    const url = (JSON.parse(server.firstLine) as { url: string }).url;
    direct = new DeviceBridgeClient({ baseUrl: url });
    proxy = await tcpRelay(url, { idleCutMs: IDLE_MS });
  }, 60_000);

  afterAll(async () => {
    await proxy?.close();
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await waitForExit(server.child).catch(() => server.child.kill('SIGKILL'));
    }
    await tmp?.cleanup();
  });

  it('waits past the idle timeout in short requests, tells its place and time, and gets the device when it frees', async () => {
    const held = await direct.acquireLease({ ttlSeconds: 60 });
    const env = { DEVICEBRIDGE_URL: proxy.url, LOG_LEVEL: 'silent' };
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [BIN, 'lease', 'acquire', '--wait', '25', '--poll', '1', '--ttl', '30'],
      {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    const progress = /waiting for a device: position 1 in the queue, \d+s elapsed/;
    const progressed = new Promise<void>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (progress.test(stderr)) resolve();
      });
    });
    // 'close': the exit code and every byte of its output.
    const waiting = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.once('close', (code) => resolve({ code, stdout, stderr })),
    );
    // Until its wait has outlived the idle timeout (the CLI's start takes a while on a loaded machine).
    for (let i = 0; i < 100; i++) {
      const now = (await direct.listWaiters()).waiters;
      if ((now[0]?.waitingMs ?? 0) > 2 * IDLE_MS) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const listed = await runCli(['lease', 'waiters', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const { waiters } = JSON.parse(listed.stdout) as {
      waiters: Array<{ position: number; waitingMs: number }>;
    };
    expect(waiters).toHaveLength(1);
    expect(waiters[0]).toMatchObject({ position: 1 });
    // The place was kept across requests: it has waited since the first one.
    expect(waiters[0]!.waitingMs).toBeGreaterThanOrEqual(2 * IDLE_MS);

    // A progress line (they come every 2 s), or the command ended without one.
    await Promise.race([progressed, waiting]);
    expect(stderr).toMatch(progress);
    await direct.releaseLease(held.id);
    const result = await waiting;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^lease_\S+ on \S+ until /);
    expect(performance.now() - started).toBeGreaterThan(2 * IDLE_MS);
    const mine = (await direct.listLeases()).leases;
    expect(mine).toHaveLength(1);
    await direct.releaseLease(mine[0]!.id);
  }, 60_000);
});
