/**
 * GET /v1/leases/{id}/logcat through the HTTP app over a simulated device and the real adb server:
 * the simulator logs installs and launches, the stream filters by tag and level, follows new
 * entries, and ends when the lease ends; other tenants get 404.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import {
  CLIENT_TOKEN,
  type DeviceBridge,
  fixture,
  listenApp,
  OTHER_TENANT_TOKEN,
  testDeviceBridge,
  testTokens,
} from '../support/bridge.ts';
import { startCli, waitForExit } from '../support/cli.ts';
import { contractCall } from '../support/contract.ts';
import { waitFor } from '../support/wait-for.ts';

const PLAIN = 'com.devicebridge.fixture.plain';

/** Read NDJSON lines of a streaming answer until `until` holds or the stream ends (bounded). */
async function readLines(
  body: ReadableStream<Uint8Array>,
  until: (lines: Array<Record<string, unknown>>) => boolean,
  timeoutMs = 5000,
): Promise<{
  lines: Array<Record<string, unknown>>;
  ended: boolean;
  reader: ReadableStreamDefaultReader<Uint8Array>;
}> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const lines: Array<Record<string, unknown>> = [];
  let rest = '';
  const deadline = Date.now() + timeoutMs;
  while (!until(lines)) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`timed out; got ${JSON.stringify(lines)}`);
    const next = await Promise.race([
      reader.read(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('read timed out')), left)),
    ]);
    if (next.done) return { lines, ended: true, reader };
    rest += decoder.decode(next.value, { stream: true });
    const parts = rest.split('\n');
    rest = parts.pop() ?? '';
    for (const p of parts) lines.push(JSON.parse(p));
  }
  return { lines, ended: false, reader };
}

describe('lease logcat', () => {
  let bridge: DeviceBridge;
  let api: ReturnType<typeof contractCall>;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ auth: testTokens(), simulate: 1 });
    api = contractCall(bridge, CLIENT_TOKEN);
  });
  afterAll(async () => bridge?.cleanup());

  const logcat = (leaseId: string, query = '', token = CLIENT_TOKEN) =>
    bridge.app.request(`/v1/leases/${leaseId}/logcat${query}`, {
      headers: { Authorization: `Bearer ${token}` },
    });

  it('streams filtered entries of what happens on the device, follows, and ends with the lease', async () => {
    const lease = (await api('POST', '/v1/leases', { ttlSeconds: 60 })).body;
    const bytes = await readFile(fixture('plain-app.apk'));
    const installed = await bridge.app.request(`/v1/leases/${lease.id}/apps`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${CLIENT_TOKEN}`, 'Content-Type': 'application/octet-stream' },
      body: bytes,
    });
    expect(installed.status).toBe(201);

    const res = await logcat(lease.id, '?tag=PackageManager&level=I');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const first = await readLines(res.body!, (l) => l.some((e) => String(e['message']).includes(PLAIN)));
    for (const e of first.lines) expect(e).toMatchObject({ tag: 'PackageManager', level: 'I' });
    expect(first.lines.at(-1)).toMatchObject({ pid: expect.any(Number), time: expect.any(Number) });

    // A second stream follows: a launch after it opened arrives.
    const since = Date.now();
    const follow = await logcat(lease.id, `?tag=ActivityTaskManager&since=${since}`);
    const waiting = readLines(follow.body!, (l) => l.length > 0);
    // Its logcat reads the device's log (the first stream's is the other reader): launch now.
    const log = (bridge.node.simulator!.devices[0]!.android as SimAndroidHandle).device.log;
    await waitFor(() => log.followers === 2, { what: "the second stream's logcat on the device" });
    expect((await api('POST', `/v1/leases/${lease.id}/apps/${PLAIN}/launch`)).status).toBe(200);
    const followed = await waiting;
    expect(String(followed.lines[0]?.['message'])).toContain(PLAIN);
    expect(followed.lines[0]?.['time']).toBeGreaterThanOrEqual(since);

    // Release ends both streams.
    const released = await api('DELETE', `/v1/leases/${lease.id}`);
    expect(released.status).toBe(200);
    expect(released.body.teardown.failures).toEqual([]);
    for (const reader of [first.reader, followed.reader]) {
      const end = await Promise.race([
        (async () => {
          for (;;) if ((await reader.read()).done) return 'ended';
        })(),
        new Promise((r) => setTimeout(() => r('still open'), 5000)),
      ]);
      expect(end).toBe('ended');
    }
  });

  it('CLI: devicebridge logcat prints entries and exits 0 when the lease ends', async () => {
    const served = await listenApp(bridge.app);
    const lease = (await api('POST', '/v1/leases', { ttlSeconds: 60 })).body;
    try {
      const env = { DEVICEBRIDGE_URL: served.url, DEVICEBRIDGE_TOKEN: CLIENT_TOKEN };
      // The buffer already holds the install of the first test.
      const cli = await startCli(['logcat', '--lease', lease.id, '--tag', 'PackageManager', '--json'], {
        env,
      });
      expect(JSON.parse(cli.firstLine)).toMatchObject({ tag: 'PackageManager' });
      await api('DELETE', `/v1/leases/${lease.id}`);
      expect(await waitForExit(cli.child)).toBe(0);
    } finally {
      await served.close();
    }
  });

  it("another tenant cannot read the lease's logcat (404); bad filters are 400", async () => {
    const lease = (await api('POST', '/v1/leases', { ttlSeconds: 60 })).body;
    expect((await logcat(lease.id, '', OTHER_TENANT_TOKEN)).status).toBe(404);
    expect((await logcat(lease.id, '?level=X')).status).toBe(400);
    await api('DELETE', `/v1/leases/${lease.id}`);
  });
});
