/** DeviceLocks deadlines (pure): a lock is never held past its operation's deadline, waiters time out. */
import { describe, expect, it } from 'vitest';
import { DeviceLocks } from '../../src/adb/device-lock.ts';

const never = () => new Promise<never>(() => {});

describe('DeviceLocks deadlines', () => {
  it("a holder whose deadline passed releases the lock, and its work's signal is aborted", async () => {
    const locks = new DeviceLocks();
    let seen: AbortSignal | undefined;
    const stuck = locks.withWrite(
      'd1',
      (signal) => {
        seen = signal;
        return never();
      },
      { timeoutMs: 50 },
    );
    // Queued behind the stuck writer with no deadline of its own: it runs once the holder's passed.
    const next = locks.withWrite('d1', async () => 'ran');
    await expect(stuck).rejects.toMatchObject({ code: 'TIMEOUT', retryable: true });
    expect(seen?.aborted).toBe(true);
    await expect(next).resolves.toBe('ran');
  });

  it('a waiter whose deadline passes gets TIMEOUT and never runs; the queue behind it moves on', async () => {
    const locks = new DeviceLocks();
    let release!: () => void;
    const holder = locks.withWrite('d1', () => new Promise<void>((r) => (release = r)));
    let waiterRan = false;
    const waiter = locks.withRead(
      'd1',
      async () => {
        waiterRan = true;
      },
      { timeoutMs: 30 },
    );
    const after = locks.withWrite('d1', async () => 'after');
    await expect(waiter).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(((await waiter.catch((e: unknown) => e)) as Error).message).toMatch(/device lock of d1/);
    release();
    await holder;
    await expect(after).resolves.toBe('after');
    expect(waiterRan).toBe(false);
  });

  it('an aborted caller leaves the queue at once with TIMEOUT', async () => {
    const locks = new DeviceLocks();
    let release!: () => void;
    const holder = locks.withWrite('d1', () => new Promise<void>((r) => (release = r)));
    const controller = new AbortController();
    const waiter = locks.withWrite('d1', async () => 'ran', { signal: controller.signal });
    controller.abort();
    await expect(waiter).rejects.toMatchObject({ code: 'TIMEOUT' });
    release();
    await holder;
    // The device is free again: a new writer gets it right away.
    await expect(locks.withWrite('d1', async () => 'free', { timeoutMs: 1000 })).resolves.toBe('free');
  });

  it('without a deadline of its own a holder is bounded by maxHoldMs', async () => {
    const locks = new DeviceLocks({ maxHoldMs: 40 });
    const stuck = locks.withWrite('d1', () => never());
    const next = locks.withRead('d1', async () => 'read');
    await expect(stuck).rejects.toMatchObject({ code: 'TIMEOUT' });
    await expect(next).resolves.toBe('read');
  });

  it('work that settles before its deadline keeps its value or error', async () => {
    const locks = new DeviceLocks();
    await expect(locks.withRead('d1', async () => 7, { timeoutMs: 1000 })).resolves.toBe(7);
    await expect(
      locks.withWrite(
        'd1',
        async () => {
          throw new Error('boom');
        },
        { timeoutMs: 1000 },
      ),
    ).rejects.toThrow('boom');
    // Nothing left held or queued.
    await expect(locks.withWrite('d1', async () => 'ok', { timeoutMs: 100 })).resolves.toBe('ok');
  });
});

describe('DeviceLocks exclusive resources', () => {
  it('holders of one resource take turns; the device read/write lock and other resources are apart', async () => {
    const locks = new DeviceLocks();
    let release!: () => void;
    const first = locks.withExclusive(
      'd1',
      'instrumentation:p',
      () => new Promise<void>((r) => (release = r)),
    );
    let secondRan = false;
    const second = locks.withExclusive('d1', 'instrumentation:p', async () => {
      secondRan = true;
    });
    await expect(locks.withWrite('d1', async () => 'write', { timeoutMs: 500 })).resolves.toBe('write');
    await expect(
      locks.withExclusive('d1', 'instrumentation:q', async () => 'other', { timeoutMs: 500 }),
    ).resolves.toBe('other');
    await expect(
      locks.withExclusive('d2', 'instrumentation:p', async () => 'device 2', { timeoutMs: 500 }),
    ).resolves.toBe('device 2');
    expect(secondRan).toBe(false);
    release();
    await first;
    await second;
    expect(secondRan).toBe(true);
  });

  it('the deadline bounds the wait only: a holder keeps its turn until its work settles', async () => {
    const locks = new DeviceLocks();
    let release!: () => void;
    let seen: AbortSignal | undefined;
    const holder = locks.withExclusive(
      'd1',
      'instrumentation:p',
      (signal) => {
        seen = signal;
        return new Promise<string>((r) => (release = () => r('held')));
      },
      { timeoutMs: 20 },
    );
    const waiter = locks.withExclusive('d1', 'instrumentation:p', async () => 'waited', { timeoutMs: 60 });
    await expect(waiter).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(((await waiter.catch((e: unknown) => e)) as Error).message).toMatch(
      /instrumentation:p lock of d1/,
    );
    expect(seen?.aborted).toBe(false);
    let nextRan = false;
    const next = locks.withExclusive('d1', 'instrumentation:p', async () => {
      nextRan = true;
    });
    await Promise.resolve();
    expect(nextRan).toBe(false);
    release();
    await expect(holder).resolves.toBe('held');
    await next;
    expect(nextRan).toBe(true);
  });
});
