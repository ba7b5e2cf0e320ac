/** The one ref scheme (`e{i+1}`) every normalized tree writes and the a11y action parses. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseA11yRef } from '../../src/helpers/glass/a11y-tree.ts';
import { formatNodeRef, parseNodeRef } from '../../src/snapshot/node-ref.ts';

describe('node refs', () => {
  it('format and parse are inverse for every index; parseA11yRef reads the same scheme', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999_999_998 }), (i) => {
        expect(formatNodeRef(i)).toMatch(/^e[1-9][0-9]*$/);
        expect(parseNodeRef(formatNodeRef(i))).toBe(i);
        expect(parseA11yRef(formatNodeRef(i))).toBe(i);
      }),
    );
  });

  it('is e + (i + 1) in decimal for every index up to 1,100,000 (the digit-by-digit path and past it)', () => {
    for (let i = 0; i < 1_100_000; i++) {
      if (formatNodeRef(i) !== `e${i + 1}`) expect(formatNodeRef(i)).toBe(`e${i + 1}`);
    }
  });

  it('anything not canonical is no ref (property)', () => {
    for (const bad of ['e0', 'e01', 'E1', '1', 'e', 'e-1', ' e1', 'e1 ', 'e1000000000']) {
      expect(parseNodeRef(bad), bad).toBeUndefined();
    }
    fc.assert(
      fc.property(fc.string(), (s) => {
        const i = parseNodeRef(s);
        if (i !== undefined) expect(formatNodeRef(i)).toBe(s);
      }),
    );
  });
});
