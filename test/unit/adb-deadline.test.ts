/**
 * One deadline per adb operation (src/adb/deadline.ts): every step of an operation gets what remains
 * of the caller's timeout, never the whole timeout again, and messages name the whole timeout.
 */
import { describe, expect, it } from 'vitest';
import { deadlineBudget, withDeadline } from '../../src/adb/deadline.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('deadlineBudget', () => {
  it('each step gets what remains of the whole timeout, with the caller signal', async () => {
    const controller = new AbortController();
    const next = deadlineBudget({ timeoutMs: 300, signal: controller.signal }, 30_000);
    const first = next();
    expect(first.signal).toBe(controller.signal);
    expect(first.totalMs).toBe(300);
    expect(first.timeoutMs).toBeLessThanOrEqual(300);
    await sleep(120);
    const second = next();
    expect(second.timeoutMs).toBeLessThanOrEqual(300 - 100);
    expect(second.timeoutMs).toBeGreaterThan(0);
  });

  it('defaults to defaultMs; a spent budget still times out (1 ms, never "no timer")', async () => {
    expect(deadlineBudget({}, 5000)().timeoutMs).toBeGreaterThan(4900);
    const next = deadlineBudget({ timeoutMs: 10 }, 5000);
    await sleep(30);
    expect(next().timeoutMs).toBe(1);
  });

  it('two steps together fail within the one timeout; the message names the whole timeout', async () => {
    const next = deadlineBudget({ timeoutMs: 200 }, 30_000);
    const started = Date.now();
    await sleep(150); // the first step spent most of it
    const never = new Promise<never>(() => undefined);
    await expect(withDeadline(never, next(), 'exit')).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: 'exit: no answer within 200 ms',
    });
    expect(Date.now() - started).toBeLessThan(200 * 1.3);
  });
});
