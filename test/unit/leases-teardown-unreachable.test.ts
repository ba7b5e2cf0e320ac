/**
 * A teardown that fails because its device does not answer is not recorded and not quarantined: the
 * device stays blocked, the teardown runs again (backoff) once the device answers; a failure on a
 * device that answers, or retries that ran out, quarantine it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LeaseManager } from '../../src/leases/manager.ts';
import { MemoryLeaseStore } from '../../src/leases/memory-store.ts';
import type { TeardownRecord } from '../../src/leases/types.ts';

const managers: LeaseManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

/** One device whose answering and teardown outcome the test switches. */
function harness(options: { teardownRetryMs?: number; store?: MemoryLeaseStore } = {}) {
  const device = {
    answers: false,
    failsWhenAnswering: false,
    runs: 0,
    /** While set, a teardown waits for it before it reads the device. */
    gate: undefined as Promise<void> | undefined,
  };
  const quarantined: string[] = [];
  const store = options.store ?? new MemoryLeaseStore();
  const manager = new LeaseManager({
    store,
    node: 'node-a',
    expiryIntervalMs: 50,
    ...(options.teardownRetryMs === undefined ? {} : { teardownRetryMs: options.teardownRetryMs }),
    devices: {
      match: async () => ({ matching: ['d1'], available: ['d1'] }),
      quarantine: async (_id, reason) => {
        quarantined.push(reason);
      },
      unreachable: async (_id, failures) =>
        !device.answers || failures.some((f) => f.includes('device offline')),
    },
    teardown: {
      closeLease: async () => {
        device.runs++;
        await device.gate;
        if (!device.answers) return { actions: [], failures: ['restoring settings: device offline'] };
        if (device.failsWhenAnswering) return { actions: [], failures: ['restoring settings: refused'] };
        return { actions: ['restored settings'], failures: [] };
      },
    },
  });
  managers.push(manager);
  return { device, quarantined, store, manager };
}

async function recorded(manager: LeaseManager, leaseId: string, ms: number): Promise<TeardownRecord> {
  const deadline = performance.now() + ms;
  for (;;) {
    const record = await manager.teardownOf(leaseId);
    if (record !== null) return record;
    if (performance.now() > deadline) throw new Error(`no teardown record within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const who = { tenant: 't', holder: 'h', selector: {} };

describe('a teardown whose device does not answer', () => {
  it('is left due (device blocked, no quarantine) and runs again once the device answers', async () => {
    const { device, quarantined, store, manager } = harness();
    manager.start();
    const lease = await manager.acquire(who);
    const released = await manager.release(lease.id);
    expect(released.teardown!.failures).toEqual([]);
    expect(released.teardown!.actions.at(-1)).toMatch(/^teardown pending: the device did not answer/);
    expect(await manager.teardownOf(lease.id)).toBeNull();
    expect(await store.acquire({ ...who, candidates: ['d1'], ttlSeconds: 60 })).toBeNull();
    expect(quarantined).toEqual([]);

    device.answers = true;
    const record = await recorded(manager, lease.id, 10_000);
    expect(record.failures).toEqual([]);
    expect(record.actions).toContain('restored settings');
    expect(record.actions[0]).toMatch(/^teardown run again/);
    expect(quarantined).toEqual([]);
    expect((await manager.acquire(who)).fencingToken).toBeGreaterThan(lease.fencingToken);
  }, 20_000);

  it('quarantines when it fails on a device that answers (also after waiting for it)', async () => {
    const { device, quarantined, manager } = harness();
    manager.start();
    const lease = await manager.acquire(who);
    await manager.release(lease.id);
    device.answers = true;
    device.failsWhenAnswering = true;
    const record = await recorded(manager, lease.id, 10_000);
    expect(record.failures).toEqual(['restoring settings: refused']);
    expect(quarantined).toHaveLength(1);

    // Answering from the start: quarantined at once, as before.
    const next = harness();
    next.device.answers = true;
    next.device.failsWhenAnswering = true;
    const l2 = await next.manager.acquire(who);
    const released = await next.manager.release(l2.id);
    expect(released.teardown!.failures).toEqual(['restoring settings: refused']);
    expect(next.quarantined).toHaveLength(1);
    expect(next.device.runs).toBe(1);
  }, 20_000);

  it("while its node stops, is left due (no quarantine) and the node's next process runs it", async () => {
    const first = harness();
    first.manager.start();
    const lease = await first.manager.acquire(who);
    let open = () => {};
    first.device.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const released = first.manager.release(lease.id);
    const stopped = first.manager.stop();
    open();
    const answer = await released;
    expect(answer.teardown!.failures).toEqual([]);
    expect(answer.teardown!.actions.at(-1)).toMatch(/^teardown pending: the device did not answer/);
    await stopped;
    expect(first.quarantined).toEqual([]);
    expect(await first.manager.teardownOf(lease.id)).toBeNull();

    // The node comes back (same name, same store) and the device answers.
    const next = harness({ store: first.store });
    next.device.answers = true;
    next.manager.start();
    const record = await recorded(next.manager, lease.id, 10_000);
    expect(record.failures).toEqual([]);
    expect(next.quarantined).toEqual([]);
  }, 20_000);

  it('quarantines once the retries ran out', async () => {
    const { quarantined, manager } = harness({ teardownRetryMs: 1500 });
    manager.start();
    const lease = await manager.acquire(who);
    await manager.release(lease.id);
    const record = await recorded(manager, lease.id, 15_000);
    expect(record.failures.at(-1)).toMatch(/the device did not answer for \d+ s: the retries ran out/);
    expect(quarantined).toHaveLength(1);
  }, 20_000);
});
