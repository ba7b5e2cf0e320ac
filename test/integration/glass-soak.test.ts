/**
 * Bounded soak of the glass companions' lifecycle: GLASS_SOAK_CYCLES lease cycles (default 50 in
 * `npm test`; `npm run soak:glass` runs 1,000), each acquire → one companion operation (clipboard
 * set/get, text, or the a11y tree, in turn) → release, through a whole node (real adb server, a
 * simulated device, Redis leases). At the end: 0 forwards on the adb server (`forward --list`
 * through our adb client), 0 agent processes on the device, the secure settings as before, and
 * every teardown without failures.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import { type DeviceBridge, tempDir, testDeviceBridge, timedRequest } from '../support/bridge.ts';
import { GLASS_AGENT_MAIN } from '../support/device-bed.ts';
import { publishGlassFixtures } from '../support/glass.ts';

const CYCLES = Number(process.env['GLASS_SOAK_CYCLES'] ?? 50);
if (!Number.isInteger(CYCLES) || CYCLES < 1 || CYCLES > 100_000) {
  throw new Error(`GLASS_SOAK_CYCLES must be an integer from 1 to 100000, got ${CYCLES}`);
}

let bridge: DeviceBridge;
let tmp: { dir: string; cleanup(): Promise<void> };

beforeAll(async () => {
  bridge = await testDeviceBridge({ simulate: 1, redisPrefix: `test:${randomUUID()}:` });
  tmp = await tempDir();
  await publishGlassFixtures(bridge.services.store, tmp.dir);
}, 120_000);

afterAll(async () => {
  await bridge?.cleanup();
  await tmp?.cleanup();
});

const json = (method: string, path: string, body?: unknown) => timedRequest(bridge.app, method, path, body);

describe('glass companions soak', () => {
  it(
    `${CYCLES} lease cycles leave no forward, no agent process and the settings as they were`,
    async () => {
      const sim = bridge.node.simulator!.devices[0]!;
      const android = sim.android as SimAndroidHandle;
      const settings = () => ({
        enabled: android.runtime.settings.get('secure', 'enabled_accessibility_services') ?? null,
        accessibility: android.runtime.settings.get('secure', 'accessibility_enabled') ?? null,
      });
      const before = settings();
      const started = performance.now();
      const failures: string[] = [];
      for (let i = 0; i < CYCLES; i++) {
        const acquired = await json('POST', '/v1/leases', { selector: {}, waitSeconds: 10 });
        expect(acquired.status, JSON.stringify(acquired.body)).toBe(201);
        const base = `/v1/leases/${acquired.body['id']}`;
        const op = i % 3;
        const done =
          op === 0
            ? await json('PUT', `${base}/clipboard`, { text: `cycle ${i} ✓` })
            : op === 1
              ? await json('POST', `${base}/text`, { text: `t${i} 👋` })
              : await json('GET', `${base}/a11y/tree`);
        expect(done.status, `cycle ${i}: ${JSON.stringify(done.body)}`).toBe(200);
        if (op === 0) expect(android.device.clipboard).toBe(`cycle ${i} ✓`);
        const released = await json('DELETE', base);
        expect(released.status).toBe(200);
        failures.push(...(released.body['teardown'].failures as string[]).map((f) => `cycle ${i}: ${f}`));
      }
      const seconds = (performance.now() - started) / 1000;
      expect(failures).toEqual([]);
      expect(await bridge.node.adb.client.listForwards()).toEqual([]);
      expect(bridge.node.adb.ledger.entries()).toEqual([]);
      await expect
        .poll(() => android.device.processes().filter((p) => p.cmdline.includes(GLASS_AGENT_MAIN)).length, {
          timeout: 10_000,
        })
        .toBe(0);
      expect(settings()).toEqual(before);
      process.stderr.write(
        `glass-soak: ${CYCLES} cycles in ${seconds.toFixed(1)} s (${((seconds * 1000) / CYCLES).toFixed(0)} ms each)\n`,
      );
    },
    Math.max(60_000, CYCLES * 1000),
  );
});
