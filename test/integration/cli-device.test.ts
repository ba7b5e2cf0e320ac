/**
 * `devicebridge device snapshot|viewport --json` against a simulated device through a private adb
 * server: the CLI drives the same helper driver as the lease operations and prints the answer the
 * lease routes give, shaped by the same functions (src/app/helper-views.ts).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { FIXTURES, tempDir } from '../support/bridge.ts';
import { runCli } from '../support/cli.ts';
import { fixtureManifest, freePortCandidate } from '../support/device-bed.ts';

describe('devicebridge device (no lease)', () => {
  let sim: Simulator;
  let dir: { dir: string; cleanup(): Promise<void> };
  let env: NodeJS.ProcessEnv;
  let args: string[];

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, count: 1 });
    dir = await tempDir('devicebridge-cli-device-');
    const manifest = path.join(dir.dir, 'manifest.json');
    await writeFile(manifest, JSON.stringify(fixtureManifest('snapshot-helper-v2.apk')));
    env = {
      DEVICEBRIDGE_DATA_DIR: dir.dir,
      DEVICEBRIDGE_ADB_PORT: String(freePortCandidate()),
      LOG_LEVEL: 'silent',
    };
    args = [
      '--connect',
      sim.devices[0]!.address,
      '--manifest',
      manifest,
      '--apk',
      path.join(FIXTURES, 'snapshot-helper-v2.apk'),
      '--transport',
      'one-shot',
      '--json',
    ];
  }, 60_000);

  afterAll(async () => {
    await sim?.close();
    await dir?.cleanup();
  });

  it('snapshot --format xml prints the lease route fields and the XML', async () => {
    const res = await runCli(['device', 'snapshot', '--format', 'xml', ...args], { env });
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({ ok: true, format: 'xml', transport: 'one-shot' });
    expect(out['xml']).toContain('</hierarchy>');
    for (const field of [
      'elapsedMs',
      'deadlineMs',
      'attempts',
      'nodeCount',
      'captureMode',
      'helperElapsedMs',
    ]) {
      expect(out, field).toHaveProperty(field);
    }
  }, 60_000);

  it('snapshot --format json carries the normalized tree; viewport its box', async () => {
    const snap = await runCli(['device', 'snapshot', ...args], { env });
    expect(snap.code, snap.stderr).toBe(0);
    const tree = JSON.parse(snap.stdout) as { format: string; snapshot: { nodes?: unknown[] } };
    expect(tree.format).toBe('json');
    expect(tree.snapshot).toBeTypeOf('object');
    const vp = await runCli(['device', 'viewport', ...args], { env });
    expect(vp.code, vp.stderr).toBe(0);
    expect(JSON.parse(vp.stdout)).toMatchObject({
      ok: true,
      transport: 'one-shot',
      width: expect.any(Number),
      height: expect.any(Number),
    });
  }, 60_000);
});
