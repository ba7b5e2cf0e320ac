/**
 * The simulator's live screen pacing (src/simulator/android/screen/frame-pacer.ts): the first frame
 * at once, a frame no sooner than 1/maxFps after the previous one, and a change after a quiet spell
 * without any wait.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FramePacer } from '../../src/simulator/android/screen/frame-pacer.ts';

describe('FramePacer', () => {
  it('lets the first frame go at once, then holds the next one for 1/maxFps', () => {
    const pacer = new FramePacer(20); // 50 ms
    expect(pacer.wait(1000)).toBe(0);
    pacer.fed(1000);
    expect(pacer.wait(1000)).toBe(50);
    expect(pacer.wait(1030)).toBe(20);
    expect(pacer.wait(1050)).toBe(0);
    // A change long after the last frame waits for nothing.
    expect(pacer.wait(5000)).toBe(0);
  });

  it('never lets two frames closer than 1/maxFps, whenever the changes come', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 240 }),
        fc.array(fc.double({ min: 0, max: 200, noNaN: true }), { minLength: 1, maxLength: 60 }),
        (maxFps, gaps) => {
          const pacer = new FramePacer(maxFps);
          const fed: number[] = [];
          let now = 0;
          for (const gap of gaps) {
            now += gap;
            // A change at `now`: fed after the wait the pacer asks for.
            const at = now + pacer.wait(now);
            expect(pacer.wait(at)).toBeLessThan(1e-9);
            pacer.fed(at);
            fed.push(at);
            now = at;
          }
          for (let i = 1; i < fed.length; i++) {
            expect((fed[i] as number) - (fed[i - 1] as number)).toBeGreaterThanOrEqual(1000 / maxFps - 1e-9);
          }
        },
      ),
    );
  });

  it('refuses a rate that is not above 0', () => {
    expect(() => new FramePacer(0)).toThrow(RangeError);
    expect(() => new FramePacer(Number.NaN)).toThrow(RangeError);
  });
});
