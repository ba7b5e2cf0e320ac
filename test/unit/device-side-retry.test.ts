import { describe, expect, it, vi } from 'vitest';
import { DeviceSideRetry } from '../../src/node/device-side-retry.ts';
import { createLogger } from '../../src/observability/logger.ts';

const silent = createLogger('silent');

/** A promise with its resolve and reject. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('starting the device side again', () => {
  it('tries until a start succeeds, doubling the delay up to its cap, and hands the side over once', async () => {
    const failures: string[] = [];
    const delays: number[] = [];
    const handed = deferred<string>();
    let attempts = 0;
    const retry: DeviceSideRetry<string> = new DeviceSideRetry({
      start: async () => {
        attempts++;
        delays.push(retry.nextDelayMs);
        if (attempts < 4) throw new Error(`not yet (${attempts})`);
        return 'side';
      },
      started: (side) => handed.resolve(side),
      discard: async () => {
        throw new Error('nothing to discard');
      },
      failed: (message) => failures.push(message),
      logger: silent,
      firstMs: 1,
      maxMs: 4,
    });
    retry.schedule();
    expect(await handed.promise).toBe('side');
    expect(failures).toEqual(['not yet (1)', 'not yet (2)', 'not yet (3)']);
    expect(delays).toEqual([1, 2, 4, 4]);
    await retry.stop();
  });

  it('stops a side that finished starting after stop() began, and never hands it over', async () => {
    const starting = deferred<string>();
    const entered = deferred<void>();
    const discarded: string[] = [];
    let handed = false;
    const retry = new DeviceSideRetry<string>({
      start: () => {
        entered.resolve();
        return starting.promise;
      },
      started: () => {
        handed = true;
      },
      discard: async (side) => {
        discarded.push(side);
      },
      failed: () => undefined,
      logger: silent,
      firstMs: 1,
    });
    retry.schedule();
    await entered.promise;
    const stopped = retry.stop();
    starting.resolve('late side');
    await stopped;
    expect(discarded).toEqual(['late side']);
    expect(handed).toBe(false);
  });

  it('makes no attempt after stop()', async () => {
    let attempts = 0;
    const retry = new DeviceSideRetry<string>({
      start: async () => {
        attempts++;
        return 'side';
      },
      started: () => undefined,
      discard: async () => undefined,
      failed: () => undefined,
      logger: silent,
      firstMs: 1,
    });
    vi.useFakeTimers();
    try {
      retry.schedule();
      await retry.stop();
      retry.schedule();
      expect(vi.getTimerCount()).toBe(0);
      await vi.runAllTimersAsync();
      expect(attempts).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
