/** The shared bounded poll of the tests (test/support/wait-for.ts). */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.ts';

describe('waitFor', () => {
  it('resolves the first answer that is not false, null or undefined', async () => {
    let calls = 0;
    const answers = [false, null, undefined, 0, 'late'];
    const got = await waitFor(() => answers[calls++], { what: 'an answer', intervalMs: 1 });
    expect(got).toBe(0); // 0 is an answer, not "not yet"
    expect(calls).toBe(4);
  });

  it('retries a check that throws, and names what it waited for, the bound and the last answer', async () => {
    let calls = 0;
    const failed = await waitFor(
      async () => {
        calls++;
        if (calls === 1) throw new Error('not listening yet');
        return false;
      },
      { what: 'the node to listen', timeoutMs: 30, intervalMs: 1 },
    ).catch((err: unknown) => err);
    expect(calls).toBeGreaterThan(1);
    expect((failed as Error).message).toBe(
      'timed out after 30 ms waiting for the node to listen (last: false)',
    );
  });

  it('names the last error when every check threw', async () => {
    const failed = await waitFor(
      () => {
        throw new Error('connection refused');
      },
      { what: 'the adb server', timeoutMs: 10, intervalMs: 1 },
    ).catch((err: unknown) => err);
    expect((failed as Error).message).toBe(
      'timed out after 10 ms waiting for the adb server (last: Error: connection refused)',
    );
  });
});
