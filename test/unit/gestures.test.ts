import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { gestureFromWords, planForGesture } from '../../src/protocol/helper/gestures.ts';
import { validateTouchPlan } from '../../src/protocol/helper/touch-plan.ts';

describe('named gestures', () => {
  it('map CLI words to specs and specs to valid plans', () => {
    expect(gestureFromWords('tap', [10, 20])).toEqual({ kind: 'tap', x: 10, y: 20 });
    expect(gestureFromWords('rotate', [1, 2, 3, 4, 5], 100)).toEqual({
      kind: 'rotate',
      center: { x: 1, y: 2 },
      radius: 3,
      startAngle: 4,
      endAngle: 5,
      durationMs: 100,
    });
    for (const words of [
      ['tap', [10, 20]],
      ['long-press', [10, 20]],
      ['swipe', [0, 0, 100, 100]],
      ['drag', [0, 0, 100, 100]],
      ['pinch', [500, 500, 300, 100]],
      ['rotate', [500, 500, 200, 0, 90]],
    ] as const) {
      const plan = planForGesture(gestureFromWords(words[0], [...words[1]]));
      expect(validateTouchPlan(plan).valid, words[0]).toBe(true);
    }
  });

  it('name the problem for wrong arity, unknown kinds and impossible values', () => {
    expect(() => gestureFromWords('tap', [1])).toThrow(/tap takes 2 numbers, got 1/);
    expect(() => gestureFromWords('teleport', [])).toThrow(/unknown gesture "teleport"/);
    expect(() =>
      planForGesture({ kind: 'swipe', from: { x: 0, y: 0 }, to: { x: 1, y: 1 }, durationMs: -5 }),
    ).toThrow(/invalid swipe/);
  });

  it('property: any numbers give a valid plan or an INVALID_ARGUMENT, nothing else', () => {
    const kinds = ['tap', 'long-press', 'swipe', 'drag', 'pinch', 'rotate', 'fling'];
    fc.assert(
      fc.property(
        fc.constantFrom(...kinds),
        fc.array(fc.double({ noNaN: false }), { maxLength: 6 }),
        fc.option(fc.integer({ min: -10, max: 200_000 }), { nil: undefined }),
        (kind, numbers, durationMs) => {
          try {
            const plan = planForGesture(gestureFromWords(kind, numbers, durationMs));
            expect(validateTouchPlan(plan).valid).toBe(true);
          } catch (err) {
            expect(err).toBeInstanceOf(BridgeError);
            expect((err as BridgeError).code).toBe('INVALID_ARGUMENT');
          }
        },
      ),
    );
  });
});
