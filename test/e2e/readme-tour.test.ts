/**
 * README's tour runs as written: its shell block (`npx devicebridge` pointed at this checkout) and
 * its typed-client block (the `devicebridge/client` import pointed at this checkout's source), each
 * against a bridge with a simulated device, in order: lease, snapshot, tap, type, the live screen
 * recorded to a file, release.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import { type DeviceBridge, listenApp, tempDir, testDeviceBridge } from '../support/bridge.ts';
import { BIN, runProcess } from '../support/cli.ts';
import { GLASS_SCREEN_MAIN } from '../support/device-bed.ts';
import { publishGlassAgent } from '../support/glass.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
let bridge: DeviceBridge;
let listening: { url: string; close(): Promise<void> };
let glass: { dir: string; cleanup(): Promise<void> };
let tour: string;

/** The fenced block of `language` in README's Tour section. */
function block(language: string): string {
  const found = new RegExp(`\`\`\`${language}\\n((?:.*\\n)*?)\`\`\``).exec(tour)?.[1];
  expect(found, `a ${language} block in the tour`).toBeDefined();
  return found!;
}

beforeAll(async () => {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Tour\n');
  expect(start).toBeGreaterThan(0);
  tour = readme.slice(start, readme.indexOf('\n## ', start + 1));
  bridge = await testDeviceBridge({ simulate: 1 });
  glass = await tempDir();
  // The agent with its encoder (the live screen's source that sends the idle screen at once).
  await publishGlassAgent(bridge.services.store, glass.dir, { extra: [GLASS_SCREEN_MAIN] });
  listening = await listenApp(bridge.app, { websockets: true });
}, 120_000);

afterAll(async () => {
  await listening?.close();
  await bridge?.cleanup();
  await glass?.cleanup();
});

describe("README's tour", () => {
  it('the shell block runs as written', async () => {
    // As a user's shell runs it (`| head` ends its pipe early by design), stopping at the first failure.
    const script = [
      'set -eu',
      `devicebridge() { "${process.execPath}" "${BIN}" "$@"; }`,
      block('sh').replaceAll('npx devicebridge', 'devicebridge'),
    ].join('\n');
    // In a folder of its own: the block writes the live screen's recording where it runs.
    const dir = await mkdtemp(path.join(tmpdir(), 'readme-tour-sh-'));
    const result = await runProcess('bash', ['-c', script], {
      cwd: dir,
      env: { DEVICEBRIDGE_URL: listening.url, LOG_LEVEL: 'silent' },
      timeoutMs: 120_000,
    });
    const recording = await readFile(path.join(dir, 'screen.h264')).catch(() => Buffer.alloc(0));
    await rm(dir, { recursive: true, force: true });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('"nodeCount"');
    // Raw Annex B H.264: a start code, then the stream's SPS (NAL type 7) first.
    expect(recording.subarray(0, 4)).toEqual(Buffer.from([0, 0, 0, 1]));
    expect(recording[4]! & 0x1f).toBe(7);
    expect((await bridge.node.leases.list()).filter((l) => l.state === 'active')).toEqual([]);
    const android = bridge.node.simulator!.devices[0]!.android as SimAndroidHandle;
    expect(android.device.inputEvents()).toContainEqual({ type: 'glass-text', text: 'héllo 日本' });
  }, 150_000);

  it('the typed-client block runs as written', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'readme-tour-'));
    try {
      const file = path.join(dir, 'tour.mts');
      const client = path.join(ROOT, 'src/client/index.ts');
      await writeFile(
        file,
        block('ts').replace("from 'devicebridge/client'", `from ${JSON.stringify(client)}`),
      );
      const result = await runProcess(process.execPath, ['--import', 'tsx', file], {
        cwd: ROOT,
        env: { DEVICEBRIDGE_URL: listening.url, LOG_LEVEL: 'silent' },
        timeoutMs: 120_000,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^\d+ nodes$/m);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
