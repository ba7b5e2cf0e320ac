/**
 * Logs of lease events (issue #12): exactly one log line per lease event — acquire, release,
 * teardown — through the HTTP app over a simulated device (the route and the manager used to log
 * acquire and release twice each).
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeviceBridge, testDeviceBridge, timedRequest } from '../support/bridge.ts';
import { waitFor } from '../support/wait-for.ts';

describe('lease event log lines', () => {
  const lines: Array<Record<string, unknown>> = [];
  let bridge: DeviceBridge;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    bridge = await testDeviceBridge({ simulate: 1, logger: pino({ level: 'info' }, sink) });
  }, 60_000);
  afterAll(async () => bridge?.cleanup());

  it('one line each for acquire, release and teardown, naming the lease', async () => {
    const acquired = await timedRequest(bridge.app, 'POST', '/v1/leases', { ttlSeconds: 60 });
    expect(acquired.status).toBe(201);
    const id = acquired.body['id'] as string;
    const released = await timedRequest(bridge.app, 'DELETE', `/v1/leases/${id}`);
    expect(released.status).toBe(200);
    // The teardown's line is the last of the lease's events: every line before it is written too.
    await waitFor(() => lines.some((l) => l['leaseId'] === id && l['msg'] === 'lease: teardown done'), {
      what: "the lease's teardown log line",
    });
    const about = lines.filter((l) => l['leaseId'] === id && /lease/i.test(String(l['msg'])));
    const messages = about.map((l) => l['msg']).filter((m) => m !== 'request');
    expect(messages.filter((m) => /acquired/.test(String(m)))).toEqual(['lease: acquired']);
    expect(messages.filter((m) => /released/.test(String(m)))).toEqual(['lease: released']);
    expect(messages.filter((m) => /teardown/.test(String(m)))).toEqual(['lease: teardown done']);
  }, 30_000);
});
