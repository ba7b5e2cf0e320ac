import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/server/rate-limit.ts';

describe('RateLimiter', () => {
  it('allows perMinute events per key, then says how long to wait, and refills over time', () => {
    let now = 0;
    const limiter = new RateLimiter(3, { now: () => now });
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 0]);
    expect(limiter.take('a')).toBe(20);
    expect(limiter.take('b')).toBe(0);
    now += 20_000;
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBeGreaterThan(0);
  });

  it('is off at 0 and keeps at most maxKeys keys', () => {
    expect(new RateLimiter(0).take('x')).toBe(0);
    const limiter = new RateLimiter(1, { maxKeys: 10 });
    for (let i = 0; i < 100; i++) limiter.take(`k${i}`);
    expect(limiter.size).toBe(10);
  });

  it('asking about a key it never counted stores nothing (successful callers do not fill the failure map)', () => {
    let now = 0;
    const limiter = new RateLimiter(2, { now: () => now, maxKeys: 3 });
    limiter.take('failing');
    limiter.take('failing');
    for (let i = 0; i < 100; i++) expect(limiter.retryAfter(`ok${i}`)).toBe(0);
    expect(limiter.size).toBe(1);
    // The one key that used its events up is still limited: the asks did not push it out.
    expect(limiter.retryAfter('failing')).toBe(30);
    now += 30_000;
    expect(limiter.retryAfter('failing')).toBe(0);
  });

  it('never allows more than perMinute + elapsed refill events (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 300 }),
        (perMinute, gaps) => {
          let now = 0;
          const limiter = new RateLimiter(perMinute, { now: () => now });
          let allowed = 0;
          for (const gap of gaps) {
            now += gap;
            const wait = limiter.take('k');
            if (wait === 0) allowed++;
            else expect(wait).toBeGreaterThanOrEqual(1);
          }
          expect(allowed).toBeLessThanOrEqual(perMinute + Math.floor((now * perMinute) / 60_000) + 1);
        },
      ),
      { numRuns: 300 },
    );
  });
});
