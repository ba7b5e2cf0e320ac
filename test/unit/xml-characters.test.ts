/**
 * Characters XML 1.0 cannot carry (C0 controls other than tab, LF and CR; unpaired surrogates;
 * U+FFFE, U+FFFF) in node attributes: the snapshot helper (UiXmlWriter.java) and the simulator's
 * writer drop them, so a dump is always well-formed XML 1.0; the bridge's parser drops the same
 * characters when a reference names one (older helpers wrote `&#1;`), so every path gives one text.
 */
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { tagAttributes } from '../../src/simulator/glass/ui-tree.ts';
import { escapeAttribute, writeUiXml } from '../../src/simulator/helper/ui-xml-writer.ts';
import { normalizeSnapshot } from '../../src/snapshot/normalize.ts';

/** What XML 1.0's Char production allows, in order (surrogate pairs kept). */
function xml10(s: string): string {
  return s.replace(
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    '',
  );
}

/**
 * Well-formed XML 1.0 as far as characters go: every raw character and every character reference
 * is an XML 1.0 Char, and the structure validates.
 */
function wellFormedXml10(xml: string): boolean {
  if (xml10(xml) !== xml) return false;
  for (const m of xml.matchAll(/&#(x[0-9a-fA-F]+|[0-9]+);/g)) {
    const ref = m[1] as string;
    const code = ref.startsWith('x') ? Number.parseInt(ref.slice(1), 16) : Number.parseInt(ref, 10);
    if (code > 0x10ffff || xml10(String.fromCodePoint(code)) === '') return false;
  }
  return XMLValidator.validate(xml) === true;
}

const node = (text: string) => ({
  className: 'android.widget.TextView',
  packageName: 'com.example',
  bounds: [0, 0, 100, 100] as const,
  text,
  contentDesc: text,
});

describe('characters XML 1.0 cannot carry', () => {
  it('the simulator writer drops them; tab, LF and CR stay as references', () => {
    expect(escapeAttribute('a\u0000\u0001b\tc\nd\re\u000b\u000c\u001f')).toBe('ab&#9;c&#10;d&#13;e');
    expect(escapeAttribute('x\u007f\u0085\ud83d\ude00\udc00y\ud800\ufffe\uffff')).toBe(
      'x\u007f\u0085\ud83d\ude00y',
    );
  });

  it("the bridge's parser drops them when a reference names one (older helpers wrote &#1;)", () => {
    const xml = `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="a&#1;b&#x1F;c&#9;d&#xFFFE;e&#55296;f" class="android.widget.TextView" package="p" content-desc="" bounds="[0,0][1,1]" /></hierarchy>`;
    expect(normalizeSnapshot(xml).nodes[0]?.text).toBe('abc\tdef');
    // The simulator's a11y service reads its screen the same way.
    expect(tagAttributes(' text="a&#1;b&#9;c"').get('text')).toBe('ab\tc');
  });

  it('property: any attribute text gives well-formed XML 1.0 that the bridge reads back', () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 16 }),
      fc.array(fc.integer({ min: 0, max: 0x3f }), { maxLength: 8 }).map((cs) => String.fromCharCode(...cs)),
      fc
        .array(fc.integer({ min: 0xd7f0, max: 0xe010 }), { maxLength: 8 })
        .map((cs) => String.fromCharCode(...cs)),
      fc
        .array(fc.integer({ min: 0xfff0, max: 0xffff }), { maxLength: 8 })
        .map((cs) => String.fromCharCode(...cs)),
    );
    fc.assert(
      fc.property(text, (s) => {
        const xml = writeUiXml([node(s)]);
        expect(wellFormedXml10(xml)).toBe(true);
        const read = normalizeSnapshot(xml).nodes[0];
        expect(read?.text).toBe(xml10(s));
        expect(read?.contentDesc).toBe(xml10(s));
      }),
      { numRuns: 1000 },
    );
  });

  it('the 20 real uiautomator dumps are well-formed XML 1.0 and still normalize', () => {
    const dir = new URL('../fixtures/uiautomator/', import.meta.url);
    const files = readdirSync(dir).filter((f) => f.endsWith('.xml'));
    expect(files).toHaveLength(20);
    for (const f of files) {
      const xml = readFileSync(new URL(f, dir), 'utf8');
      expect(wellFormedXml10(xml), f).toBe(true);
      expect(normalizeSnapshot(xml).nodeCount, f).toBeGreaterThan(0);
    }
  });
});
