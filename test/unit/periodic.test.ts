import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PeriodicTask } from '../../src/periodic.ts';

describe('PeriodicTask (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs at once, then intervalMs after each run; true runs again at once; a failure does not stop it', async () => {
    const results: Array<boolean | 'fail'> = [true, false, 'fail', false];
    let runs = 0;
    const task = new PeriodicTask(1000, async () => {
      const r = results[runs++] ?? false;
      if (r === 'fail') throw new Error('pass failed');
      return r;
    });
    task.start();
    task.start(); // idempotent
    await vi.advanceTimersByTimeAsync(5);
    expect(runs).toBe(2); // the first run said there is more: the second followed at once
    await vi.advanceTimersByTimeAsync(900);
    expect(runs).toBe(2); // the second said no more: the third waits the interval
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(3); // this one fails ...
    await vi.advanceTimersByTimeAsync(1000);
    expect(runs).toBe(4); // ... and the loop goes on
    await task.stop();
    expect(task.running).toBe(false);
    await vi.advanceTimersByTimeAsync(5000);
    expect(runs).toBe(4);
  });

  it('stop waits for the run in progress and never runs again', async () => {
    let release: () => void = () => undefined;
    let runs = 0;
    const task = new PeriodicTask(10, () => {
      runs++;
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    task.start();
    await vi.advanceTimersByTimeAsync(0);
    let stopped = false;
    const stopping = task.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(100);
    expect(stopped).toBe(false);
    release();
    await stopping;
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(1);
  });
});
