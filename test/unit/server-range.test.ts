import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRange } from '../../src/server/range.ts';

describe('parseRange', () => {
  it('parses single ranges, suffixes and open ends', () => {
    expect(parseRange(undefined, 10)).toEqual({ kind: 'full' });
    expect(parseRange('bytes=0-3', 10)).toEqual({ kind: 'partial', start: 0, end: 3 });
    expect(parseRange('bytes=5-', 10)).toEqual({ kind: 'partial', start: 5, end: 9 });
    expect(parseRange('bytes=-3', 10)).toEqual({ kind: 'partial', start: 7, end: 9 });
    expect(parseRange('bytes=-30', 10)).toEqual({ kind: 'partial', start: 0, end: 9 });
    expect(parseRange('bytes=8-100', 10)).toEqual({ kind: 'partial', start: 8, end: 9 });
  });

  it('flags unsatisfiable ranges and ignores what it does not serve', () => {
    expect(parseRange('bytes=10-', 10)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-0', 10)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=0-1,4-5', 10)).toEqual({ kind: 'full' });
    expect(parseRange('items=0-1', 10)).toEqual({ kind: 'full' });
    expect(parseRange('bytes=5-2', 10)).toEqual({ kind: 'full' });
  });

  it('property: a partial range always lies inside the object', () => {
    fc.assert(
      fc.property(fc.string(), fc.nat(1 << 20), (header, size) => {
        const r = parseRange(header, size);
        if (r.kind === 'partial') {
          expect(r.start).toBeGreaterThanOrEqual(0);
          expect(r.end).toBeLessThan(size);
          expect(r.start).toBeLessThanOrEqual(r.end);
        }
      }),
    );
    fc.assert(
      fc.property(fc.nat(1000), fc.nat(1000), fc.integer({ min: 1, max: 2000 }), (a, b, size) => {
        const r = parseRange(`bytes=${a}-${b}`, size);
        if (a <= b && a < size) expect(r).toEqual({ kind: 'partial', start: a, end: Math.min(b, size - 1) });
        else if (a <= b) expect(r).toEqual({ kind: 'unsatisfiable' });
        else expect(r).toEqual({ kind: 'full' });
      }),
    );
  });
});
