/**
 * A 20,000-node snapshot (issue 16, "large dumps stream to the client"): the simulator shows a
 * generated 20,000-node screen in its own process, reached through the bridge's real adb server;
 * the bridge (this process) serves it over HTTP as normalized JSON and as raw XML, both written as a
 * stream. Checks the bodies against the non-streamed answer (`JSON.stringify` of the same view) and
 * the bridge's peak heap + external growth while serving, against the body size measured here.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeSnapshot } from '../../src/snapshot/normalize.ts';
import { type DeviceBridge, tempDir, testDeviceBridge } from '../support/bridge.ts';
import { startSimulatorProcess } from '../support/fleet.ts';
import { servedWithPeak } from '../support/served-memory.ts';

describe('a 20,000-node snapshot is streamed to the client', () => {
  let simulator: Awaited<ReturnType<typeof startSimulatorProcess>>;
  let tmp: { dir: string; cleanup(): Promise<void> };
  let bridge: DeviceBridge;
  let leaseId: string;

  beforeAll(async () => {
    simulator = await startSimulatorProcess(1, ['--nodes', '20000', '--seed', '7']);
    tmp = await tempDir();
    const file = await simulator.writeDevicesFile(path.join(tmp.dir, 'devices.json'));
    bridge = await testDeviceBridge({ simulate: 0, env: { DEVICEBRIDGE_DEVICES_FILE: file } });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await bridge.app.request('/v1/leases', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ ttlSeconds: 600 }),
      });
      if (res.status === 201) {
        leaseId = ((await res.json()) as { id: string }).id;
        break;
      }
      if (Date.now() > deadline) throw new Error(`no lease: ${res.status} ${await res.text()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const ensured = await bridge.app.request(`/v1/leases/${leaseId}/helpers/android-snapshot-helper/ensure`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(ensured.status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await bridge?.cleanup();
    await simulator?.stop();
    await tmp?.cleanup();
  }, 60_000);

  for (const transport of ['session', 'one-shot'] as const) {
    it(`${transport}: JSON and XML bodies equal the non-streamed answers; peak memory bounded by the body size`, async () => {
      const capture = { transport, maxNodes: 20000, waitForIdleTimeoutMs: 0, timeoutMs: 60_000 };
      const xmlRes = await servedWithPeak(bridge.app, `/v1/leases/${leaseId}/snapshot`, {
        ...capture,
        format: 'xml',
      });
      expect(xmlRes.status, xmlRes.body.toString().slice(0, 300)).toBe(200);
      expect(xmlRes.contentType).toMatch(/^application\/json/);
      const xmlText = xmlRes.body.toString('utf8');
      const xmlView = JSON.parse(xmlText) as { xml: string; nodeCount: number; transport: string };
      expect(xmlView.transport).toBe(transport);
      expect(xmlView.nodeCount).toBe(20000);
      // Byte-identical to what c.json would have written for the same view.
      expect(xmlText).toBe(JSON.stringify(xmlView));
      expect(xmlRes.pieces).toBeGreaterThan(10);
      const xmlBytes = Buffer.byteLength(xmlView.xml);

      const jsonRes = await servedWithPeak(bridge.app, `/v1/leases/${leaseId}/snapshot`, {
        ...capture,
        format: 'json',
      });
      expect(jsonRes.status).toBe(200);
      const jsonText = jsonRes.body.toString('utf8');
      const jsonView = JSON.parse(jsonText) as { snapshot: unknown; format: string };
      const { snapshot: _s, ...fields } = jsonView;
      const expected = JSON.stringify({ ...fields, snapshot: normalizeSnapshot(xmlView.xml) });
      expect(jsonText === expected, 'the streamed JSON is the non-streamed answer, byte for byte').toBe(true);
      expect(jsonRes.pieces).toBeGreaterThan(10);

      const ratio = (peak: number) => Number((peak / xmlBytes).toFixed(2));
      // Printed for RESULTS.md; the bench `snapshot-stream-20000-heap` measures the same.
      console.log(
        JSON.stringify({
          transport,
          xmlBytes,
          jsonBodyBytes: jsonRes.body.length,
          peakJson: ratio(jsonRes.peak),
          peakXml: ratio(xmlRes.peak),
          pieces: jsonRes.pieces,
        }),
      );
      // Generous ceilings, relative to the body served in this run (the body copy this test keeps is
      // part of the figure; GC timing moves the peak by a few × the XML). Measured 2026-12-01: JSON
      // 8–9×, XML 6.5–11× the XML size (RESULTS.md, snapshot-stream-20000-heap).
      expect(jsonRes.peak).toBeLessThan(jsonRes.body.length + 12 * xmlBytes);
      expect(xmlRes.peak).toBeLessThan(xmlRes.body.length + 14 * xmlBytes);
    }, 120_000);
  }
});
