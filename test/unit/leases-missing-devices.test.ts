/**
 * When the store lost the records of the devices a selector matches (Redis came back empty; their
 * owner puts them back shortly), an acquire never answers NOT_FOUND: UNAVAILABLE (retryable)
 * without waitSeconds, and with it, it waits for the device.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BridgeError } from '../../src/errors.ts';
import { type Candidates, LeaseManager } from '../../src/leases/manager.ts';
import { MemoryLeaseStore } from '../../src/leases/memory-store.ts';
import { expectCode } from '../support/leases-contract.ts';

const managers: LeaseManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

function harness() {
  const records = { back: false };
  const manager = new LeaseManager({
    store: new MemoryLeaseStore(),
    node: 'node-a',
    pollMs: 20,
    devices: {
      match: async (selector): Promise<Candidates> => {
        if (selector.deviceId === 'gone') return { matching: [], available: [], missing: [] };
        return records.back
          ? { matching: ['d1'], available: ['d1'], missing: [] }
          : { matching: [], available: [], missing: ['d1'] };
      },
    },
    teardown: { closeLease: async () => ({ actions: [], failures: [] }) },
  });
  managers.push(manager);
  return { records, manager };
}

const who = { tenant: 't', holder: 'h' };

describe('acquire while the store lost the device records', () => {
  it('answers UNAVAILABLE (retryable) without waitSeconds; NOT_FOUND only for what was never there', async () => {
    const { manager } = harness();
    const err: BridgeError = await expectCode(manager.acquire({ ...who, selector: {} }), 'UNAVAILABLE');
    expect(err.retryable).toBe(true);
    expect(err.details).toMatchObject({ deviceIds: ['d1'] });
    const none = await expectCode(manager.acquire({ ...who, selector: { deviceId: 'gone' } }), 'NOT_FOUND');
    expect(none.retryable).toBe(false);
  });

  it('waits for the device with waitSeconds', async () => {
    const { records, manager } = harness();
    const pending = manager.acquire({ ...who, selector: {}, waitSeconds: 5 });
    setTimeout(() => {
      records.back = true;
    }, 100);
    expect((await pending).deviceId).toBe('d1');
  });
});
