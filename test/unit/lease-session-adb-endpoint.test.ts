/**
 * The adb endpoint as a lease operation (src/lease-session/adb-endpoint.ts), with fakes of our own
 * interfaces (the relay itself is tested against the real adb client in test/integration/): an
 * endpoint whose lease ended while it opened is closed again, teardown closes the lease's endpoints
 * and records it, and the endpoint's liveness check follows the lease's fence.
 */
import { describe, expect, it } from 'vitest';
import { parseAdbPublicKey } from '../../src/adb/adb-public-key.ts';
import type { EndpointTarget, OpenEndpoint } from '../../src/adb/relay-endpoints.ts';
import { BridgeError } from '../../src/errors.ts';
import { LeaseRoom, type LeaseSessionOptions, type LeaseTarget } from '../../src/lease-session/index.ts';
import { fixturePublicKey } from '../support/adb-keys.ts';

const key = parseAdbPublicKey(fixturePublicKey);
const lease: LeaseTarget = { id: 'lease-1', deviceId: 'dev-1', fencingToken: 3, serial: 'emulator-5554' };

function setup(fence: () => Promise<void>, closeFails = false) {
  const opened: EndpointTarget[] = [];
  const closed: string[] = [];
  const endpoints = {
    async open(target: EndpointTarget): Promise<OpenEndpoint> {
      opened.push(target);
      return {
        endpoint: '127.0.0.1:7201',
        host: '127.0.0.1',
        port: 7201,
        keyFingerprint: key.fingerprint,
        serial: '127.0.0.1:7201',
      };
    },
    async close(owner: string): Promise<string[]> {
      closed.push(owner);
      if (closeFails) throw new Error('listener stuck');
      return ['closed adb endpoint 127.0.0.1:7201 (1 connection(s), 2 stream(s))'];
    },
  };
  const options = {
    adb: { ledger: { release: async () => ({ removed: [], failed: [] }) } },
    fence: { checkFence: async () => fence() },
    endpoints,
  } as unknown as LeaseSessionOptions;
  return { ops: new LeaseRoom(options), opened, closed };
}

describe('the lease-session room: the adb endpoint', () => {
  it('opens for the lease and its device; teardown closes it and records the lines', async () => {
    const { ops, opened, closed } = setup(async () => undefined);
    expect((await ops.adb.open(lease, key)).endpoint).toBe('127.0.0.1:7201');
    expect(opened[0]).toMatchObject({ owner: 'lease-1', serial: 'emulator-5554', deviceId: 'dev-1', key });
    const report = await ops.closeLease('lease-1');
    expect(closed).toEqual(['lease-1']);
    expect(report.actions).toContain('closed adb endpoint 127.0.0.1:7201 (1 connection(s), 2 stream(s))');
    expect(report.failures).toEqual([]);
  });

  it('an endpoint whose lease ended while it opened is closed again (LEASE_EXPIRED)', async () => {
    const { ops, closed } = setup(async () => {
      throw new BridgeError('LEASE_EXPIRED', 'lease has ended');
    });
    await expect(ops.adb.open(lease, key)).rejects.toMatchObject({ code: 'LEASE_EXPIRED' });
    expect(closed).toEqual(['lease-1']);
  });

  it('a teardown that cannot close an endpoint reports a failure', async () => {
    const { ops } = setup(async () => undefined, true);
    await ops.adb.open(lease, key);
    const report = await ops.closeLease('lease-1');
    expect(report.failures).toEqual(['closing adb endpoints: listener stuck']);
  });

  it("the endpoint's liveness follows the fence: ended → false, store trouble → thrown", async () => {
    let answer: () => Promise<void> = async () => undefined;
    const { ops, opened } = setup(() => answer());
    await ops.adb.open(lease, key);
    const alive = opened[0]!.alive!;
    expect(await alive()).toBe(true);
    answer = async () => {
      throw new BridgeError('CONFLICT', 'fencing token does not match the lease');
    };
    expect(await alive()).toBe(false);
    answer = async () => {
      throw new BridgeError('UNAVAILABLE', 'redis down');
    };
    await expect(alive()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('without endpoints the node answers UNAVAILABLE', async () => {
    const ops = new LeaseRoom({
      fence: { checkFence: async () => undefined },
    } as unknown as LeaseSessionOptions);
    await expect(ops.adb.open(lease, key)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});
