/** The uiautomator scanner's in-place value parsers (src/snapshot/xml-values.ts). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeEntities,
  lineColumn,
  parseBounds,
  parseIntIn,
  XmlError,
} from '../../src/snapshot/xml-values.ts';

/** Run a parser on the whole of `s` the way the scanner does (a slice of a larger document). */
const whole = <T>(parse: (xml: string, start: number, end: number) => T, s: string): T =>
  parse(`>${s}<`, 1, s.length + 1);

const int10 = fc.integer({ min: -9_999_999_999, max: 9_999_999_999 });

describe('parseIntIn', () => {
  it('examples', () => {
    expect(whole(parseIntIn, '0')).toBe(0);
    expect(whole(parseIntIn, '-17')).toBe(-17);
    expect(whole(parseIntIn, '')).toBeNull();
    expect(whole(parseIntIn, '-')).toBeNull();
    expect(whole(parseIntIn, '+1')).toBeNull();
    expect(whole(parseIntIn, '1.0')).toBeNull();
    expect(whole(parseIntIn, '12345678901')).toBeNull();
  });

  it('property: every integer of at most 10 digits reads back; anything else is null or an integer', () => {
    fc.assert(
      fc.property(int10, (n) => {
        expect(whole(parseIntIn, String(n))).toBe(n);
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 14 }), (s) => {
        const v = whole(parseIntIn, s);
        if (v === null) return;
        expect(/^-?[0-9]{1,10}$/.test(s)).toBe(true);
        expect(v).toBe(Number(s));
      }),
    );
  });
});

describe('parseBounds', () => {
  it('examples', () => {
    expect(whole(parseBounds, '[0,0][1080,2400]')).toEqual({ x: 0, y: 0, width: 1080, height: 2400 });
    expect(whole(parseBounds, '[-5,10][3,4]')).toEqual({ x: -5, y: 10, width: 8, height: 0 });
    expect(whole(parseBounds, '[0,0][1,1] ')).toBeNull();
    expect(whole(parseBounds, '[0,0]')).toBeNull();
    expect(whole(parseBounds, '[0, 0][1,1]')).toBeNull();
  });

  it('property: [l,t][r,b] gives the box with width/height never negative; other text is null', () => {
    fc.assert(
      fc.property(int10, int10, int10, int10, (l, t, r, b) => {
        expect(whole(parseBounds, `[${l},${t}][${r},${b}]`)).toEqual({
          x: l,
          y: t,
          width: Math.max(0, r - l),
          height: Math.max(0, b - t),
        });
      }),
    );
    fc.assert(
      fc.property(
        fc.string({ maxLength: 24, unit: fc.constantFrom('[', ']', ',', '-', '0', '1', '9', ' ', 'x') }),
        (s) => {
          const v = whole(parseBounds, s);
          if (v === null) return;
          expect(/^\[-?\d{1,10},-?\d{1,10}\]\[-?\d{1,10},-?\d{1,10}\]$/.test(s)).toBe(true);
          expect(v.width).toBeGreaterThanOrEqual(0);
          expect(v.height).toBeGreaterThanOrEqual(0);
        },
      ),
    );
  });
});

/** Escape text the way an XML writer may: named or numeric (decimal/hex) references. */
function escapeArbitrary(text: string, style: number[]): string {
  let out = '';
  let i = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    const pick = style[i++ % style.length] as number;
    const named = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }[ch];
    if (named !== undefined && pick === 0) out += named;
    else if (named !== undefined || pick === 1) out += `&#${cp};`;
    else if (pick === 2) out += `&#x${cp.toString(16)};`;
    else out += ch;
  }
  return out;
}

describe('decodeEntities', () => {
  it('examples', () => {
    expect(whole(decodeEntities, 'a &amp; b&lt;&#20013;&#x1F600;')).toBe('a & b<中😀');
    expect(() => whole(decodeEntities, 'a &nbsp; b')).toThrow(XmlError);
    expect(() => whole(decodeEntities, 'a & b')).toThrow(XmlError);
    expect(() => whole(decodeEntities, '&#x110000;')).toThrow(XmlError);
  });

  it('property: decoding undoes any mix of named, decimal and hex references', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => `${s}&`),
        fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 8 }),
        (text, style) => {
          expect(whole(decodeEntities, escapeArbitrary(text, style))).toBe(text);
        },
      ),
    );
  });

  it('property: on arbitrary text it returns a string or throws XmlError inside the value, nothing else', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20, unit: fc.constantFrom('&', ';', '#', 'x', 'a', 'm', 'p', '1', 'F', ' ') }),
        (s) => {
          const xml = `>&${s}<`;
          try {
            expect(typeof decodeEntities(xml, 1, xml.length - 1)).toBe('string');
          } catch (err) {
            expect(err).toBeInstanceOf(XmlError);
            const offset = (err as XmlError).offset;
            expect(offset).toBeGreaterThanOrEqual(1);
            expect(offset).toBeLessThan(xml.length - 1);
          }
        },
      ),
    );
  });
});

describe('lineColumn', () => {
  it('property: agrees with splitting the prefix at newlines', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40, unit: fc.constantFrom('a', '\n', '\r', ' ') }),
        fc.nat(),
        (s, n) => {
          const offset = n % (s.length + 1);
          const lines = s.slice(0, offset).split('\n');
          expect(lineColumn(s, offset)).toEqual({
            line: lines.length,
            column: (lines[lines.length - 1] as string).length + 1,
          });
        },
      ),
    );
  });
});
