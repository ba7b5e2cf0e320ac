import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBridgeError } from '../../src/errors.ts';
import { dexClassNames, parseDexJar } from '../../src/protocol/apk/dex.ts';
import { buildDex, buildDexJar, buildZip } from '../support/dex-jar.ts';

/** A dex with one class `a.B`, byte for byte from the format's tables (header 0x70 bytes). */
function goldenDex(): Uint8Array {
  const bytes = new Uint8Array(0x70 + 4 + 4 + 32 + 7);
  const dv = new DataView(bytes.buffer);
  bytes.set([0x64, 0x65, 0x78, 0x0a, 0x30, 0x33, 0x35, 0x00], 0); // "dex\n035\0"
  dv.setUint32(0x38, 1, true); // string_ids_size
  dv.setUint32(0x3c, 0x70, true); // string_ids_off
  dv.setUint32(0x40, 1, true); // type_ids_size
  dv.setUint32(0x44, 0x74, true); // type_ids_off
  dv.setUint32(0x60, 1, true); // class_defs_size
  dv.setUint32(0x64, 0x78, true); // class_defs_off
  dv.setUint32(0x70, 0x98, true); // string_id 0 -> string_data_item at 0x98
  dv.setUint32(0x74, 0, true); // type_id 0 -> string 0
  dv.setUint32(0x78, 0, true); // class_def 0: class_idx = type 0
  bytes.set([0x05, 0x4c, 0x61, 0x2f, 0x42, 0x3b, 0x00], 0x98); // uleb128 5, "La/B;", NUL
  return bytes;
}

const invalid = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(isBridgeError(err) && err.code).toBe('INVALID_ARGUMENT');
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
};

const javaIdent = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_$]{0,12}$/);
const className = fc
  .tuple(fc.array(javaIdent, { minLength: 1, maxLength: 4 }), javaIdent)
  .map(([pkg, cls]) => [...pkg, cls].join('.'));

describe('dexClassNames', () => {
  it('reads the golden dex written from the format tables', () => {
    expect(dexClassNames(goldenDex())).toEqual(['a.B']);
  });

  it('reads inner classes and keeps class_def order', () => {
    const names = ['dev.x.Main', 'dev.x.Main$1', 'dev.x.core.Agent'];
    expect(dexClassNames(buildDex(names))).toEqual(names);
  });

  it('refuses what is not a dex, naming the problem', () => {
    expect(invalid(() => dexClassNames(new Uint8Array(10)))).toContain('shorter than a dex header');
    const bad = goldenDex();
    bad[0] = 0x50;
    expect(invalid(() => dexClassNames(bad))).toContain('no dex magic');
    const outside = goldenDex();
    new DataView(outside.buffer).setUint32(0x64, 0xfffffff0, true);
    expect(invalid(() => dexClassNames(outside))).toContain('lies outside classes.dex');
    const badType = goldenDex();
    new DataView(badType.buffer).setUint32(0x78, 7, true);
    expect(invalid(() => dexClassNames(badType))).toContain('names type 7 of 1');
  });

  it('property: the classes a dex defines are read back exactly', () => {
    fc.assert(
      fc.property(fc.uniqueArray(className, { minLength: 0, maxLength: 20 }), (names) => {
        expect(dexClassNames(buildDex(names))).toEqual(names);
      }),
    );
  });

  it('property: any corruption is refused as INVALID_ARGUMENT or read, never crashes', () => {
    const base = buildDex(['dev.x.Main', 'dev.x.Other']);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(base.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
        fc.nat(base.length),
        (edits, cut) => {
          const bytes = base.slice(0, Math.max(cut, 0));
          for (const [at, value] of edits) if (at < bytes.length) bytes[at] = value;
          try {
            const names = dexClassNames(bytes);
            expect(Array.isArray(names)).toBe(true);
          } catch (err) {
            expect(isBridgeError(err) && err.code).toBe('INVALID_ARGUMENT');
          }
        },
      ),
    );
  });
});

describe('parseDexJar', () => {
  it('reads a jar built with buildDexJar', () => {
    expect(parseDexJar(buildDexJar(['p.Main', 'p.Main$1'])).classes).toEqual(['p.Main', 'p.Main$1']);
  });

  it('lists the classes of classes.dex and classes2.dex', () => {
    const jar = buildZip([
      { name: 'classes.dex', data: buildDex(['a.Main']) },
      { name: 'classes2.dex', data: buildDex(['a.More']) },
      { name: 'META-INF/MANIFEST.MF', data: new TextEncoder().encode('Manifest-Version: 1.0\n') },
    ]);
    expect(parseDexJar(jar)).toEqual({
      classes: ['a.Main', 'a.More'],
      dexEntries: ['classes.dex', 'classes2.dex'],
    });
  });

  it('refuses a plain Java jar and a non-ZIP as a dex jar', () => {
    const plain = buildZip([{ name: 'a/Main.class', data: new Uint8Array([0xca, 0xfe, 0xba, 0xbe]) }]);
    expect(invalid(() => parseDexJar(plain))).toBe(
      'not a valid dex jar: no classes.dex entry (app_process runs dex code: dex the jar first)',
    );
    expect(invalid(() => parseDexJar(new TextEncoder().encode('not a zip')))).toMatch(
      /^not a valid dex jar: /,
    );
  });

  it('property: arbitrary bytes are refused as INVALID_ARGUMENT, never another error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(invalid(() => parseDexJar(bytes))).toMatch(/^not a valid dex jar: /);
      }),
    );
  });
});
