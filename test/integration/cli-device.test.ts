/**
 * `devicebridge device snapshot|viewport --json` against a simulated device through a private adb
 * server: the CLI drives the same helper driver as the lease operations and prints the answer the
 * lease routes give, shaped by the same functions (src/app/helper-views.ts).
 */
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { FIXTURES, tempDir } from '../support/bridge.ts';
import { runCli } from '../support/cli.ts';
import { fixtureManifest, freePort } from '../support/device-bed.ts';

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
      DEVICEBRIDGE_ADB_PORT: String(await freePort()),
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

  it('--manifest URL: fetched and used; a body past the manifest limit is refused once the limit is passed, not read to its end', async () => {
    // A real HTTP server on loopback: /ok.json is the manifest, /manifest.json never ends.
    let sent = 0;
    const server = http.createServer((req, res) => {
      if (req.url === '/ok.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(fixtureManifest('snapshot-helper-v2.apk')));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (!res.destroyed && sent < 512 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('error', () => undefined);
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const manifestAt = args.indexOf('--manifest') + 1;
      const withUrl = (url: string) => args.map((a, i) => (i === manifestAt ? url : a));
      const ok = await runCli(['device', 'viewport', ...withUrl(`${base}/ok.json`)], { env });
      expect(ok.code, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, width: expect.any(Number) });
      const res = await runCli(['device', 'viewport', ...withUrl(`${base}/manifest.json`)], { env });
      expect(res.code).not.toBe(0);
      expect(res.stdout + res.stderr).toMatch(/manifest is larger than 1048576 bytes/);
      // Stopped soon after the limit (what was in flight), not after the server's 512 MiB.
      expect(sent).toBeLessThan(64 * 1024 * 1024);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 60_000);
});
