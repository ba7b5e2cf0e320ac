/**
 * The simulator's live screen pacing (src/simulator/android/screen/frame-pacer.ts): the first frame
 * at once, at most one frame in each 1/maxFps slot of a grid from the first frame, repeats at the
 * rate although woken late, and a change after a quiet spell without any wait.
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

  it('never feeds more than one frame a slot: any window of W ms holds at most W·maxFps/1000 + 1 frames', () => {
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
          const interval = 1000 / maxFps;
          for (let i = 0; i < fed.length; i++) {
            for (let j = i + 1; j < fed.length; j++) {
              expect((fed[j] as number) - (fed[i] as number)).toBeGreaterThan((j - i - 1) * interval - 1e-6);
            }
          }
        },
      ),
    );
  });

  it('repeats woken late in their slots still come at maxFps (the grid, not the last frame, sets the next)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 120 }),
        fc.array(fc.double({ min: 0, max: 0.9, noNaN: true }), { minLength: 50, maxLength: 200 }),
        (maxFps, lateness) => {
          const interval = 1000 / maxFps;
          const pacer = new FramePacer(maxFps);
          let now = 0;
          pacer.fed(now);
          for (const late of lateness) {
            // The timer asked for the next slot's start fires up to 0.9 of a slot late.
            now += pacer.wait(now) + late * interval;
            expect(pacer.wait(now)).toBe(0);
            pacer.fed(now);
          }
          // One frame in each slot: the last one is in slot `lateness.length`.
          expect(Math.floor(now / interval + 1e-9)).toBe(lateness.length);
        },
      ),
    );
  });

  it('refuses a rate that is not above 0', () => {
    expect(() => new FramePacer(0)).toThrow(RangeError);
    expect(() => new FramePacer(Number.NaN)).toThrow(RangeError);
  });
});
