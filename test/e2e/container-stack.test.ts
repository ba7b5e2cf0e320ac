/**
 * The container test (test/container/run.sh) from `npm test`: opt-in with DEVICEBRIDGE_CONTAINER_TEST=1
 * (it needs root, podman and several minutes). `.ci/run` always runs the script itself after
 * `npm test`. See README, "The container test".
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const enabled = process.env.DEVICEBRIDGE_CONTAINER_TEST === '1';

describe.skipIf(!enabled)('deployment files with real containers (test/container/run.sh)', () => {
  it('builds the image, runs the compose stack, leases, snapshots and takes over', async () => {
    const script = new URL('../container/run.sh', import.meta.url).pathname;
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (b: Buffer) => {
      output += b.toString();
      process.stderr.write(b);
    });
    child.stderr.on('data', (b: Buffer) => {
      output += b.toString();
      process.stderr.write(b);
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, output.slice(-4000)).toBe(0);
    expect(output).toMatch(/container-test \[\d+ s\] PASSED/);
  }, 900_000);
});
