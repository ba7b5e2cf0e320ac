/**
 * One-shot helper calls on one lease at the same time: each is an `am instrument` of the helper
 * package, and starting one kills a running one of the same package (the simulator does this, as
 * Android does). The bridge must not let them kill each other: 80 concurrent pairs, 0 failures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeviceBridge, type TimedAnswer, testDeviceBridge, timedRequest } from '../support/bridge.ts';

const PAIRS = 80;
/** Pairs in flight at once: enough to overlap, few enough to keep the test to seconds. */
const PARALLEL_PAIRS = 4;

let bridge: DeviceBridge;
let leaseId: string;

const api = (method: string, path: string, body?: unknown): Promise<TimedAnswer> =>
  timedRequest(bridge.app, method, path, body);

const snapshot = () =>
  api('POST', `/v1/leases/${leaseId}/snapshot`, { format: 'xml', transport: 'one-shot', timeoutMs: 5000 });
const tap = () =>
  api('POST', `/v1/leases/${leaseId}/gestures`, { kind: 'tap', x: 10, y: 10, transport: 'one-shot' });

/** Run `PAIRS` pairs, `PARALLEL_PAIRS` at a time; the failed answers. */
async function pairs(pair: () => Array<Promise<TimedAnswer>>): Promise<TimedAnswer[]> {
  const failed: TimedAnswer[] = [];
  let next = 0;
  const lane = async () => {
    while (next < PAIRS) {
      next += 1;
      for (const answer of await Promise.all(pair())) if (answer.status !== 200) failed.push(answer);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_PAIRS }, lane));
  return failed;
}

beforeAll(async () => {
  bridge = await testDeviceBridge({ simulate: 1 });
  const acquired = await api('POST', '/v1/leases', { selector: {}, ttlSeconds: 300, waitSeconds: 30 });
  expect(acquired.status, JSON.stringify(acquired.body)).toBe(201);
  leaseId = acquired.body.id as string;
  // Install the helper once, so the pairs below only run it.
  expect((await snapshot()).status).toBe(200);
}, 120_000);

afterAll(async () => {
  if (leaseId !== undefined) await api('DELETE', `/v1/leases/${leaseId}`);
  await bridge?.cleanup();
});

const errors = (failed: TimedAnswer[]) =>
  failed.slice(0, 3).map((a) => `${a.status} ${a.body?.error?.code}: ${a.body?.error?.message}`);

describe('concurrent one-shot helper calls on one lease', () => {
  it(`${PAIRS} snapshot + snapshot pairs: none fails`, async () => {
    const failed = await pairs(() => [snapshot(), snapshot()]);
    expect(failed.length, errors(failed).join('\n')).toBe(0);
  }, 60_000);

  it(`${PAIRS} snapshot + tap pairs: none fails`, async () => {
    const failed = await pairs(() => [snapshot(), tap()]);
    expect(failed.length, errors(failed).join('\n')).toBe(0);
  }, 60_000);

  it('no helper is left running on the device afterwards', () => {
    expect(bridge.node.simulator!.devices[0]!.runningHelpers()).toBe(0);
  });
});
