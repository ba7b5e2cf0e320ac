/**
 * A bridge that starts before its Redis answers (a fleet coming up at once: containers start in
 * order, not when the one before is ready) drives devices once Redis answers, instead of serving
 * manifests only for the rest of its life. Meanwhile it is not ready, and says why.
 *
 * Real processes and the real Redis, reached through a TCP relay on a port the system chose: first
 * it hangs up every connection (Redis not answering yet), then it relays bytes.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { deleteKeys, REDIS_URL, type ServeNode, startServeNode, stopServeNode } from '../support/fleet.ts';
import { tcpRelay } from '../support/tcp-relay.ts';
import { waitFor } from '../support/wait-for.ts';

interface Readiness {
  status: string;
  checks: Record<string, string>;
}

async function readiness(url: string): Promise<{ code: number; body: Readiness }> {
  const res = await fetch(`${url}/readyz`);
  return { code: res.status, body: (await res.json()) as Readiness };
}

describe('a bridge started before its Redis', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('is not ready while Redis does not answer, then drives its devices once it does', async () => {
    const gate = await tcpRelay(REDIS_URL, { refusing: true });
    cleanups.push(gate.close);
    const gateUrl = `redis://${new URL(gate.url).host}`;
    const prefix = `test-late-redis-${randomUUID()}:`;
    const admin = new Redis(REDIS_URL);
    cleanups.push(async () => {
      await deleteKeys(admin, prefix);
      await admin.quit();
    });
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);

    let node: ServeNode | undefined;
    cleanups.push(async () => node && stopServeNode(node));
    node = await startServeNode({ dataDir: tmp.dir, redisUrl: gateUrl, prefix, simulate: 0 });
    const url = node.url;
    expect(gate.refused).toBeGreaterThan(0);

    // Not ready, naming the device side and why; device routes answer UNAVAILABLE (retryable).
    const before = await readiness(url);
    expect(before.code).toBe(503);
    expect(before.body.checks['devices']).toMatch(/Redis/);
    const devices = await fetch(`${url}/v1/devices`);
    expect(devices.status).toBe(503);
    const error = ((await devices.json()) as { error: { code: string; retryable?: boolean } }).error;
    expect(error.code).toBe('UNAVAILABLE');

    // Redis answers now: the device side comes up without a restart.
    gate.pass();
    const ready = await waitFor(
      async () => {
        const now = await readiness(url);
        return now.code === 200 ? now.body : false;
      },
      { what: 'the bridge ready once Redis answers', timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(ready.checks).toMatchObject({ leaseStore: 'ok', adbServer: 'ok' });
    expect(ready.checks['devices']).toBeUndefined();
    const listed = await fetch(`${url}/v1/devices`);
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { devices: unknown[] }).devices).toEqual([]);
    // The node joined the fleet in that Redis.
    expect((await admin.keys(`${prefix}*`)).length).toBeGreaterThan(0);

    expect(await stopServeNode(node)).toBe(0);
    node = undefined;
  }, 120_000);
});
