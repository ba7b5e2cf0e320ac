/**
 * One deadline per adb operation (src/adb/deadline.ts): every step of an operation gets what remains
 * of the caller's timeout, never the whole timeout again, and messages name the whole timeout.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deadlineBudget, withDeadline } from '../../src/adb/deadline.ts';

// The budget reads Date.now() and the deadline is a timer: both faked, so the test moves the clock.
describe('deadlineBudget', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('each step gets what remains of the whole timeout, with the caller signal', () => {
    const controller = new AbortController();
    const next = deadlineBudget({ timeoutMs: 300, signal: controller.signal }, 30_000);
    const first = next();
    expect(first.signal).toBe(controller.signal);
    expect(first.totalMs).toBe(300);
    expect(first.timeoutMs).toBe(300);
    vi.advanceTimersByTime(120);
    const second = next();
    expect(second.timeoutMs).toBe(180);
    expect(second.totalMs).toBe(300);
  });

  it('defaults to defaultMs; a spent budget still times out (1 ms, never "no timer")', () => {
    expect(deadlineBudget({}, 5000)().timeoutMs).toBe(5000);
    const next = deadlineBudget({ timeoutMs: 10 }, 5000);
    vi.advanceTimersByTime(30);
    expect(next().timeoutMs).toBe(1);
  });

  it('two steps together fail within the one timeout; the message names the whole timeout', async () => {
    const next = deadlineBudget({ timeoutMs: 200 }, 30_000);
    vi.advanceTimersByTime(150); // the first step spent most of it
    const never = new Promise<never>(() => undefined);
    let settled = false;
    const step = withDeadline(never, next(), 'exit').finally(() => {
      settled = true;
    });
    step.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(49);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1); // 200 ms of the whole timeout, not 150 + 200
    await expect(step).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: 'exit: no answer within 200 ms',
    });
  });
});
