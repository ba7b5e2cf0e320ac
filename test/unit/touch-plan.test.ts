import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildDrag,
  buildLongPress,
  buildPinch,
  buildRotate,
  buildSwipe,
  buildTap,
  countInjectedEvents,
  decodeTouchPlanBase64,
  encodeTouchPlanBase64,
  TAP_DURATION_MS,
  type TouchPlan,
  type TouchPlanValidation,
  validateTouchPlan,
} from '../../src/protocol/helper/touch-plan.ts';

const swipe = (): Record<string, unknown> => ({
  kind: 'swipe',
  durationMs: 300,
  pointers: [
    {
      pointerId: 0,
      samples: [
        { offsetMs: 0, x: 10, y: 20 },
        { offsetMs: 150, x: 50, y: 20.5 },
        { offsetMs: 300, x: 100, y: 21 },
      ],
    },
  ],
});

const transform = (): Record<string, unknown> => ({
  protocol: 'android-touch-plan-v1',
  kind: 'transform',
  durationMs: 200,
  pointers: [
    {
      pointerId: 0,
      samples: [
        { offsetMs: 0, x: 100, y: 100 },
        { offsetMs: 100, x: 90, y: 100 },
        { offsetMs: 200, x: 80, y: 100 },
      ],
    },
    {
      pointerId: 1,
      samples: [
        { offsetMs: 0, x: 200, y: 100 },
        { offsetMs: 100, x: 210, y: 100 },
        { offsetMs: 200, x: 220, y: 100 },
      ],
    },
  ],
});

function errorsOf(result: TouchPlanValidation): Array<{ path: string; message: string }> {
  if (result.valid) throw new Error('expected an invalid plan');
  return result.errors;
}

// biome-ignore lint/suspicious/noExplicitAny: tests poke arbitrary shapes into plans
function mutate(plan: Record<string, unknown>, fn: (p: any) => void): Record<string, unknown> {
  const copy = structuredClone(plan);
  fn(copy);
  return copy;
}

describe('validateTouchPlan: the protocol rules', () => {
  it('accepts a valid swipe and a valid transform (protocol field optional)', () => {
    const a = validateTouchPlan(swipe());
    expect(a.valid).toBe(true);
    const b = validateTouchPlan(transform());
    expect(b).toEqual({ valid: true, plan: { ...transform(), protocol: undefined } } as unknown);
  });

  it('returns a normalized plan without the protocol field or unknown fields', () => {
    const result = validateTouchPlan({ ...transform(), extra: 1 });
    expect(result.valid && Object.keys(result.plan)).toEqual(['kind', 'durationMs', 'pointers']);
  });

  it('rejects a protocol other than android-touch-plan-v1', () => {
    expect(errorsOf(validateTouchPlan({ ...swipe(), protocol: 'android-touch-plan-v2' }))).toEqual([
      { path: 'protocol', message: expect.stringContaining('must be android-touch-plan-v1') },
    ]);
  });

  it('kind: swipe (one pointer) or transform (two pointers)', () => {
    expect(errorsOf(validateTouchPlan({ ...swipe(), kind: 'tap' }))[0]).toEqual({
      path: 'kind',
      message: expect.stringContaining('swipe (one pointer) or transform (two pointers)'),
    });
    const twoForSwipe = mutate(transform(), (p) => {
      p.kind = 'swipe';
    });
    expect(errorsOf(validateTouchPlan(twoForSwipe))).toContainEqual({
      path: 'pointers',
      message: 'swipe requires exactly one pointer, got 2',
    });
    const oneForTransform = mutate(swipe(), (p) => {
      p.kind = 'transform';
    });
    expect(errorsOf(validateTouchPlan(oneForTransform))).toContainEqual({
      path: 'pointers',
      message: 'transform requires exactly two pointers, got 1',
    });
  });

  it.each([-1, 120_001, 1.5, '300', null])('durationMs: integer, 0-120000 (rejects %s)', (durationMs) => {
    const errors = errorsOf(validateTouchPlan({ ...swipe(), durationMs }));
    expect(errors[0]).toEqual({
      path: 'durationMs',
      message: expect.stringContaining('must be an integer, 0-120000'),
    });
  });

  it('durationMs 120000 and 0 are accepted', () => {
    expect(validateTouchPlan(buildSwipe({ x: 0, y: 0 }, { x: 1, y: 1 }, 120_000)).valid).toBe(true);
    const zero = mutate(swipe(), (p) => {
      p.durationMs = 0;
      p.pointers[0].samples = [
        { offsetMs: 0, x: 1, y: 1 },
        { offsetMs: 0, x: 2, y: 2 },
      ];
    });
    expect(validateTouchPlan(zero).valid).toBe(true);
  });

  it('pointerIds ordered from 0', () => {
    const bad = mutate(transform(), (p) => {
      p.pointers[0].pointerId = 1;
      p.pointers[1].pointerId = 0;
    });
    const errors = errorsOf(validateTouchPlan(bad));
    expect(errors.map((e) => e.path)).toEqual(['pointers.0.pointerId', 'pointers.1.pointerId']);
    expect(errors[0]?.message).toContain('pointerIds must be ordered from 0');
  });

  it('each pointer has at least two samples', () => {
    const bad = mutate(swipe(), (p) => {
      p.pointers[0].samples = [{ offsetMs: 0, x: 1, y: 1 }];
      p.durationMs = 0;
    });
    expect(errorsOf(validateTouchPlan(bad))).toEqual([
      { path: 'pointers.0.samples', message: 'must have at least two entries, got 1' },
    ]);
  });

  it('offsetMs strictly increasing; equal offsets only when durationMs is 0', () => {
    const equal = mutate(swipe(), (p) => {
      p.pointers[0].samples[1].offsetMs = 0;
    });
    expect(errorsOf(validateTouchPlan(equal))).toEqual([
      {
        path: 'pointers.0.samples.1.offsetMs',
        message: expect.stringContaining('equal offsets are only allowed when durationMs is 0'),
      },
    ]);
    const decreasing = mutate(swipe(), (p) => {
      p.pointers[0].samples.splice(2, 0, { offsetMs: 100, x: 1, y: 1 });
    });
    expect(errorsOf(validateTouchPlan(decreasing))).toEqual([
      {
        path: 'pointers.0.samples.2.offsetMs',
        message: expect.stringContaining('must be strictly increasing'),
      },
    ]);
  });

  it("the first sample's offsetMs must be 0", () => {
    const bad = mutate(swipe(), (p) => {
      p.pointers[0].samples[0].offsetMs = 5;
    });
    expect(errorsOf(validateTouchPlan(bad))).toEqual([
      { path: 'pointers.0.samples.0.offsetMs', message: "the first sample's offsetMs must be 0, got 5" },
    ]);
  });

  it('the last sample must equal durationMs', () => {
    const bad = mutate(swipe(), (p) => {
      p.durationMs = 400;
    });
    expect(errorsOf(validateTouchPlan(bad))).toEqual([
      {
        path: 'pointers.0.samples.2.offsetMs',
        message: "the last sample's offsetMs must equal durationMs (400), got 300",
      },
    ]);
  });

  it('transform: both pointers share the same offsetMs sequence', () => {
    const shifted = mutate(transform(), (p) => {
      p.pointers[1].samples[1].offsetMs = 120;
    });
    expect(errorsOf(validateTouchPlan(shifted))).toEqual([
      {
        path: 'pointers.1.samples.1.offsetMs',
        message: expect.stringContaining('both transform pointers must share the same offsetMs sequence'),
      },
    ]);
    const shorter = mutate(transform(), (p) => {
      p.pointers[1].samples.splice(1, 1);
    });
    expect(errorsOf(validateTouchPlan(shorter))[0]?.path).toBe('pointers.1.samples');
  });

  it('x/y must be finite numbers (fractions allowed); offsetMs must be an integer', () => {
    const bad = mutate(transform(), (p) => {
      p.pointers[1].samples[2].x = '3';
      p.pointers[0].samples[1].y = null;
      p.pointers[0].samples[1].offsetMs = 100.5;
    });
    expect(errorsOf(validateTouchPlan(bad)).map((e) => e.path)).toEqual([
      'pointers.0.samples.1.offsetMs',
      'pointers.0.samples.1.y',
      'pointers.1.samples.2.x',
    ]);
    // JSON cannot carry NaN/Infinity, but in-process callers can.
    const inf = mutate(swipe(), () => {});
    (inf['pointers'] as Array<{ samples: Array<{ x: number }> }>)[0]!.samples[0]!.x =
      Number.POSITIVE_INFINITY;
    expect(errorsOf(validateTouchPlan(inf))).toEqual([
      { path: 'pointers.0.samples.0.x', message: expect.stringContaining('must be a finite number') },
    ]);
  });

  it.each([null, [], 'swipe', 3])('rejects a non-object (%s) at the root', (value) => {
    expect(errorsOf(validateTouchPlan(value))[0]?.path).toBe('');
  });
});

describe('base64 codec', () => {
  it('round-trips a plan and writes the protocol field first', () => {
    const plan = buildPinch({ x: 540, y: 960 }, 400, 100, 300);
    const b64 = encodeTouchPlanBase64(plan);
    expect(Buffer.from(b64, 'base64').toString('utf8')).toMatch(
      /^\{"protocol":"android-touch-plan-v1","kind"/,
    );
    expect(decodeTouchPlanBase64(b64)).toEqual({ valid: true, plan });
  });

  it('rejects non-base64, empty, non-JSON and invalid plans with a message', () => {
    expect(errorsOf(decodeTouchPlanBase64('')).at(0)?.message).toContain('empty');
    expect(errorsOf(decodeTouchPlanBase64('a$bc')).at(0)?.message).toContain('not valid base64');
    expect(errorsOf(decodeTouchPlanBase64('abc')).at(0)?.message).toContain('not valid base64');
    expect(errorsOf(decodeTouchPlanBase64(Buffer.from('{nope').toString('base64'))).at(0)?.message).toContain(
      'not valid JSON',
    );
    expect(errorsOf(decodeTouchPlanBase64(Buffer.from('{}').toString('base64'))).map((e) => e.path)).toEqual([
      'kind',
      'durationMs',
      'pointers',
    ]);
  });

  it('never throws on arbitrary strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.base64String(),
          fc.json().map((j) => Buffer.from(j).toString('base64')),
        ),
        (s) => {
          const result = decodeTouchPlanBase64(s);
          expect(typeof result.valid).toBe('boolean');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('validateTouchPlan never throws on arbitrary values', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        expect(typeof validateTouchPlan(v).valid).toBe('boolean');
      }),
    );
  });
});

const coordArb = fc.double({ min: -5000, max: 5000, noNaN: true });
const pointArb = fc.record({ x: coordArb, y: coordArb });
const durationArb = fc.integer({ min: 0, max: 120_000 });
const stepsArb = fc.option(fc.integer({ min: 1, max: 300 }), { nil: undefined });

const planArb: fc.Arbitrary<TouchPlan> = fc.oneof(
  fc.tuple(coordArb, coordArb).map(([x, y]) => buildTap(x, y)),
  fc.tuple(coordArb, coordArb, durationArb).map(([x, y, d]) => buildLongPress(x, y, d)),
  fc.tuple(pointArb, pointArb, durationArb, stepsArb).map(([a, b, d, s]) => buildSwipe(a, b, d, s)),
  fc
    .tuple(
      pointArb,
      pointArb,
      fc.integer({ min: 0, max: 60_000 }),
      fc.integer({ min: 0, max: 60_000 }),
      stepsArb,
    )
    .map(([a, b, d, h, s]) => buildDrag(a, b, d, h, s)),
  fc
    .tuple(
      pointArb,
      fc.double({ min: 0, max: 3000, noNaN: true }),
      fc.double({ min: 0, max: 3000, noNaN: true }),
      durationArb,
      coordArb,
      stepsArb,
    )
    .map(([c, s, e, d, angle, steps]) => buildPinch(c, s, e, d, angle, steps)),
  fc
    .tuple(pointArb, fc.double({ min: 0, max: 3000, noNaN: true }), coordArb, coordArb, durationArb, stepsArb)
    .map(([c, r, a0, a1, d, steps]) => buildRotate(c, r, a0, a1, d, steps)),
);

describe('builders', () => {
  it('tap: two samples at the same point, 50 ms apart', () => {
    expect(buildTap(10.123, 20)).toEqual({
      kind: 'swipe',
      durationMs: TAP_DURATION_MS,
      pointers: [
        {
          pointerId: 0,
          samples: [
            { offsetMs: 0, x: 10.12, y: 20 },
            { offsetMs: 50, x: 10.12, y: 20 },
          ],
        },
      ],
    });
  });

  it('swipe: ends exactly at the target, at durationMs', () => {
    const plan = buildSwipe({ x: 0, y: 0 }, { x: 100, y: 200 }, 10, 4);
    const samples = plan.pointers[0]!.samples;
    expect(samples.map((s) => s.offsetMs)).toEqual([0, 3, 5, 8, 10]);
    expect(samples.at(-1)).toEqual({ offsetMs: 10, x: 100, y: 200 });
    expect(buildSwipe({ x: 0, y: 0 }, { x: 1, y: 1 }, 3, 50).pointers[0]!.samples).toHaveLength(4);
  });

  it('drag: holds at the start point, then moves', () => {
    const plan = buildDrag({ x: 1, y: 1 }, { x: 9, y: 9 }, 100, 500, 2);
    expect(plan.durationMs).toBe(600);
    expect(plan.pointers[0]!.samples).toEqual([
      { offsetMs: 0, x: 1, y: 1 },
      { offsetMs: 500, x: 1, y: 1 },
      { offsetMs: 550, x: 5, y: 5 },
      { offsetMs: 600, x: 9, y: 9 },
    ]);
  });

  it('pinch: fingers are startDistance apart at the start and endDistance apart at the end', () => {
    const plan = buildPinch({ x: 500, y: 500 }, 400, 100, 200, 90);
    const [p0, p1] = plan.pointers;
    const dist = (i: number): number => {
      const a = p0!.samples.at(i)!;
      const b = p1!.samples.at(i)!;
      return Math.hypot(a.x - b.x, a.y - b.y);
    };
    expect(dist(0)).toBeCloseTo(400, 1);
    expect(dist(-1)).toBeCloseTo(100, 1);
    expect(p0!.samples[0]!.x).toBeCloseTo(500, 1);
    expect(countInjectedEvents(plan)).toBe(p0!.samples.length + 3);
  });

  it('rotate: fingers stay opposite on the circle', () => {
    const plan = buildRotate({ x: 0, y: 0 }, 100, 0, 90, 100, 2);
    expect(plan.pointers[0]!.samples.at(-1)).toEqual({ offsetMs: 100, x: 0, y: 100 });
    expect(plan.pointers[1]!.samples.at(-1)).toEqual({ offsetMs: 100, x: 0, y: -100 });
  });

  it('reject inputs that cannot make a valid plan', () => {
    expect(() => buildSwipe({ x: 0, y: 0 }, { x: 1, y: 1 }, 120_001)).toThrow(RangeError);
    expect(() => buildTap(Number.NaN, 1)).toThrow(RangeError);
    expect(() => buildDrag({ x: 0, y: 0 }, { x: 1, y: 1 }, 100_000, 30_000)).toThrow(RangeError);
    expect(() => buildSwipe({ x: 0, y: 0 }, { x: 1, y: 1 }, 100, 0)).toThrow(RangeError);
    expect(() => buildPinch({ x: 0, y: 0 }, -1, 1, 100)).toThrow(RangeError);
  });

  it('property: every plan the builders emit validates and round-trips through base64', () => {
    fc.assert(
      fc.property(planArb, (plan) => {
        const result = validateTouchPlan(plan);
        expect(result).toEqual({ valid: true, plan });
        expect(decodeTouchPlanBase64(encodeTouchPlanBase64(plan))).toEqual({ valid: true, plan });
      }),
      { numRuns: 300 },
    );
  });

  type Mutation = { apply: (p: TouchPlan, pi: number, si: number) => boolean; field: string };
  const mutations: Mutation[] = [
    {
      field: 'offsetMs',
      apply: (p, pi, si) => {
        const samples = p.pointers[pi]!.samples;
        const s = samples[si]!;
        // Break ordering: equal to the previous offset (only valid when durationMs is 0) or shifted past the end.
        if (si > 0 && p.durationMs !== 0) s.offsetMs = samples[si - 1]!.offsetMs;
        else s.offsetMs = p.durationMs + 1;
        return true;
      },
    },
    {
      field: 'x',
      apply: (p, pi, si) => {
        (p.pointers[pi]!.samples[si] as unknown as Record<string, unknown>)['x'] = 'oops';
        return true;
      },
    },
    {
      field: 'y',
      apply: (p, pi, si) => {
        delete (p.pointers[pi]!.samples[si] as unknown as Record<string, unknown>)['y'];
        return true;
      },
    },
    {
      field: 'offsetMs',
      apply: (p, pi, si) => {
        p.pointers[pi]!.samples[si]!.offsetMs += 0.5;
        return true;
      },
    },
  ];

  it('property: a mutated sample is rejected with a path naming its pointer and sample', () => {
    fc.assert(
      fc.property(planArb, fc.nat(), fc.nat(), fc.nat({ max: mutations.length - 1 }), (plan, pr, sr, mr) => {
        const copy = structuredClone(plan);
        const pi = pr % copy.pointers.length;
        const si = sr % copy.pointers[pi]!.samples.length;
        const m = mutations[mr]!;
        m.apply(copy, pi, si);
        const errors = errorsOf(validateTouchPlan(copy));
        const prefix = `pointers.${pi}.samples.`;
        // The mutated sample or (for ordering breaks) a neighbour on the same pointer is named.
        expect(errors.some((e) => e.path.startsWith(prefix) && e.path.endsWith(`.${m.field}`))).toBe(true);
        expect(errors.every((e) => /^pointers\.\d\.samples(\.\d+\.(offsetMs|x|y))?$/.test(e.path))).toBe(
          true,
        );
      }),
      { numRuns: 400 },
    );
  });
});

/**
 * Golden wire bytes written by hand from seed 000's android-touch-plan-v1 description (base64 of
 * the JSON text, computed outside this code base), so an encoder or decoder bug cannot pass on both
 * the bridge and the simulator, which share this codec.
 */
describe('touch plan golden bytes', () => {
  const SWIPE_B64 =
    'eyJwcm90b2NvbCI6ImFuZHJvaWQtdG91Y2gtcGxhbi12MSIsImtpbmQiOiJzd2lwZSIsImR1cmF0aW9uTXMiOjMwMCwicG9pbnRlcnMiOlt7InBvaW50ZXJJZCI6MCwic2FtcGxlcyI6W3sib2Zmc2V0TXMiOjAsIngiOjU0MCwieSI6MTYwMH0seyJvZmZzZXRNcyI6MTUwLCJ4Ijo1NDAsInkiOjEyMDB9LHsib2Zmc2V0TXMiOjMwMCwieCI6NTQwLCJ5Ijo4MDB9XX1dfQ==';
  const TRANSFORM_B64 =
    'eyJwcm90b2NvbCI6ImFuZHJvaWQtdG91Y2gtcGxhbi12MSIsImtpbmQiOiJ0cmFuc2Zvcm0iLCJkdXJhdGlvbk1zIjowLCJwb2ludGVycyI6W3sicG9pbnRlcklkIjowLCJzYW1wbGVzIjpbeyJvZmZzZXRNcyI6MCwieCI6MTAwLCJ5IjoxMDB9LHsib2Zmc2V0TXMiOjAsIngiOjUwLCJ5Ijo1MH1dfSx7InBvaW50ZXJJZCI6MSwic2FtcGxlcyI6W3sib2Zmc2V0TXMiOjAsIngiOjIwMCwieSI6MjAwfSx7Im9mZnNldE1zIjowLCJ4IjoyNTAsInkiOjI1MH1dfV19';
  const swipe = {
    kind: 'swipe' as const,
    durationMs: 300,
    pointers: [
      {
        pointerId: 0,
        samples: [
          { offsetMs: 0, x: 540, y: 1600 },
          { offsetMs: 150, x: 540, y: 1200 },
          { offsetMs: 300, x: 540, y: 800 },
        ],
      },
    ],
  };
  // durationMs 0: equal offsets allowed; both pointers share the offset sequence.
  const transform = {
    kind: 'transform' as const,
    durationMs: 0,
    pointers: [
      {
        pointerId: 0,
        samples: [
          { offsetMs: 0, x: 100, y: 100 },
          { offsetMs: 0, x: 50, y: 50 },
        ],
      },
      {
        pointerId: 1,
        samples: [
          { offsetMs: 0, x: 200, y: 200 },
          { offsetMs: 0, x: 250, y: 250 },
        ],
      },
    ],
  };

  it('encodes a plan to exactly the documented bytes', () => {
    expect(encodeTouchPlanBase64(swipe)).toBe(SWIPE_B64);
    expect(encodeTouchPlanBase64(transform)).toBe(TRANSFORM_B64);
  });

  it('decodes the documented bytes to the plan', () => {
    const a = decodeTouchPlanBase64(SWIPE_B64);
    const b = decodeTouchPlanBase64(TRANSFORM_B64);
    expect(a.valid && a.plan).toEqual(swipe);
    expect(b.valid && b.plan).toEqual(transform);
  });
});

describe('the payloads the helper (TouchPlanParser.java) answers too', () => {
  const { cases } = JSON.parse(
    readFileSync(new URL('../fixtures/touch-plans.json', import.meta.url), 'utf8'),
  ) as { cases: Array<{ name: string; payloadBase64: string; plan?: TouchPlan; error?: string }> };

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const verdict = decodeTouchPlanBase64(c.payloadBase64);
    if (c.plan !== undefined) {
      expect(verdict).toEqual({ valid: true, plan: c.plan });
      return;
    }
    // The helper's message: every error as `path: message`, joined with "; ".
    expect(
      errorsOf(verdict)
        .map((e) => (e.path === '' ? e.message : `${e.path}: ${e.message}`))
        .join('; '),
    ).toBe(c.error);
  });

  it('property: any plan the bridge builds survives a shell around its payload (spaces, tabs, CR, LF)', () => {
    fc.assert(
      fc.property(
        planArb,
        fc.stringMatching(/^[ \t\r\n]{0,4}$/),
        fc.stringMatching(/^[ \t\r\n]{0,4}$/),
        (plan, before, after) => {
          const verdict = decodeTouchPlanBase64(`${before}${encodeTouchPlanBase64(plan)}${after}`);
          expect(verdict.valid && verdict.plan).toEqual(validateTouchPlan(plan).valid && plan);
        },
      ),
    );
  });
});
