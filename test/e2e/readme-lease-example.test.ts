/**
 * README's lease example fails loudly (issue #12): when `lease acquire` fails (here: no bridge
 * answers), the example's shell stops with a non-zero status before it runs a command without a
 * lease. The lines are taken from README.md itself, `npx devicebridge` pointed at this checkout.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runProcess } from '../support/cli.ts';
import { freePort } from '../support/device-bed.ts';

const README = path.resolve(import.meta.dirname, '../../README.md');

describe("README's lease example", () => {
  it('stops at a failed acquire (set -euo pipefail): the next command never runs', async () => {
    const text = await readFile(README, 'utf8');
    const block = text.match(/```sh\n(set -euo pipefail[^\n]*\n(?:.*\n)*?)```/)?.[1];
    expect(block, 'the first example block starts with set -euo pipefail').toBeDefined();
    const lines = block!.split('\n');
    const acquire = lines.find((l) => l.startsWith('LEASE=$(npx devicebridge lease acquire'));
    expect(acquire).toBeDefined();
    const script = [
      lines[0],
      `devicebridge() { "${process.execPath}" "${BIN}" "$@"; }`,
      acquire!.replace('npx devicebridge', 'devicebridge').replace('--wait 60', '--wait 1'),
      'echo "continued with lease $LEASE"',
    ].join('\n');
    const result = await runProcess('bash', ['-c', script], {
      env: { DEVICEBRIDGE_URL: `http://127.0.0.1:${await freePort()}`, LOG_LEVEL: 'silent' },
    });
    expect(result.code).not.toBe(0);
    expect(result.stdout).not.toContain('continued');
    expect(result.stderr).toContain('cannot reach the bridge');
  }, 30_000);
});
