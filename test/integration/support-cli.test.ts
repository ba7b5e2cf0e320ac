/**
 * The tests' process runner: a command that exits without reading its stdin must not turn the
 * unread input into an uncaught EPIPE (seen in CI on `aapt`/`unzip` runs of the android build test).
 */
import { describe, expect, it } from 'vitest';
import { runProcess } from '../support/cli.ts';

describe('runProcess', () => {
  it('survives a command that exits without reading a large stdin', async () => {
    const errors: unknown[] = [];
    const onError = (err: unknown) => errors.push(err);
    process.on('uncaughtException', onError);
    try {
      for (let i = 0; i < 5; i++) {
        const result = await runProcess('true', [], { input: Buffer.alloc(4 << 20, 0x61) });
        expect(result.code).toBe(0);
      }
      // Give a late EPIPE the chance to surface before the listener goes.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('uncaughtException', onError);
    }
    expect(errors).toEqual([]);
  });
});
