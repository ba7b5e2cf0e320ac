/**
 * A lease's resource list (src/lease-session/resources.ts): teardown closes what the lease opened
 * last opened first, a close that fails is recorded and the others still run, a close that hangs is
 * abandoned past its bound and recorded, and the doctor's stop closes only the helpers'.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CLOSE_GRACE_MS, type Closed, Resources } from '../../src/lease-session/resources.ts';

const record = (): Closed => ({ actions: [], failures: [] });

afterEach(() => {
  vi.useRealTimers();
});

describe('the resource list of a lease', () => {
  it('closes in reverse order of opening and records each close', async () => {
    const resources = new Resources();
    const order: string[] = [];
    for (const what of ['helper session', 'glass companions', 'adb endpoints']) {
      resources.add(what, async () => {
        order.push(what);
        return { actions: [`closed ${what}`] };
      });
    }
    const closed = record();
    await resources.close(1000, closed);
    expect(order).toEqual(['adb endpoints', 'glass companions', 'helper session']);
    expect(closed).toEqual({
      actions: ['closed adb endpoints', 'closed glass companions', 'closed helper session'],
      failures: [],
    });
    expect(resources.size).toBe(0);
  });

  it('a close that fails is recorded and does not stop the others', async () => {
    const resources = new Resources();
    const closedOnes: string[] = [];
    resources.add('first', async () => {
      closedOnes.push('first');
      return { actions: ['closed first'] };
    });
    resources.add('second', async () => {
      throw new Error('device offline');
    });
    resources.add('third', () => {
      throw new Error('refused at once');
    });
    const closed = record();
    await resources.close(1000, closed);
    expect(closedOnes).toEqual(['first']);
    expect(closed.actions).toEqual(['closed first']);
    expect(closed.failures).toEqual(['closing third: refused at once', 'closing second: device offline']);
  });

  it('each close is bounded: one that hangs is abandoned, recorded, and the next runs', async () => {
    vi.useFakeTimers();
    const resources = new Resources();
    const waits: number[] = [];
    resources.add('after', async (waitMs) => {
      waits.push(waitMs);
      return { actions: ['closed after'] };
    });
    resources.add('stuck', (waitMs) => {
      waits.push(waitMs);
      return new Promise(() => undefined);
    });
    const closed = record();
    const closing = resources.close(200, closed);
    await vi.advanceTimersByTimeAsync(200 + CLOSE_GRACE_MS);
    await closing;
    expect(waits).toEqual([200, 200]);
    expect(closed.failures).toEqual([`closing stuck: still closing after ${200 + CLOSE_GRACE_MS} ms`]);
    expect(closed.actions).toEqual(['closed after']);
  });

  it("the doctor's stop closes only the helpers' resources; a forgotten one is not closed", async () => {
    const resources = new Resources();
    const order: string[] = [];
    const add = (what: string, helper: boolean) =>
      resources.add(
        what,
        async () => {
          order.push(what);
          return undefined;
        },
        { helper },
      );
    add('helper session', true);
    add('adb endpoints', false);
    const forget = add('old helper session', true);
    add('glass companions', true);
    forget();
    expect(resources.has('old helper session')).toBe(false);
    await resources.close(1000, record(), 'helpers');
    expect(order).toEqual(['glass companions', 'helper session']);
    expect(resources.size).toBe(1);
    expect(resources.has('adb endpoints')).toBe(true);
  });
});
