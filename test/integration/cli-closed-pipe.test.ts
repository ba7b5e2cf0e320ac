/**
 * A reader that goes away early (`devicebridge … | head`) ends the command quietly, as Unix tools
 * do: no "write EPIPE" error line, no crash report.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runProcess } from '../support/cli.ts';

const DUMP = path.resolve(
  import.meta.dirname,
  '../fixtures/uiautomator/20-avito-search-gboard-multiwindow.xml',
);

describe('a closed output pipe', () => {
  it('ends the command without an error line', async () => {
    // Many copies of a large answer: far more than a pipe holds, so the writes meet the closed pipe.
    const script = [
      `for i in $(seq 1 5); do "${process.execPath}" "${BIN}" snapshot normalize "${DUMP}" 2>>"$ERR" | head -c 1 >/dev/null; done`,
      'cat "$ERR"',
    ].join('\n');
    const result = await runProcess('bash', ['-c', `ERR=$(mktemp); ${script}; rm -f "$ERR"`], {
      env: { LOG_LEVEL: 'silent' },
      timeoutMs: 120_000,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('EPIPE');
    expect(result.stdout).toBe('');
  }, 150_000);
});
