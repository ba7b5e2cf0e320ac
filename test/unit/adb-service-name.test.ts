/** strictServiceName: an OPEN payload's service name, decoded strictly (property-based). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { strictServiceName } from '../../src/protocol/adb/transport-message.ts';

describe('strictServiceName', () => {
  it('property: any bytes are either refused (null) or decode to text that encodes back to exactly them', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const name = strictServiceName(bytes);
        if (name === null) return;
        let end = bytes.length;
        while (end > 0 && bytes[end - 1] === 0) end--;
        expect(Buffer.from(name, 'utf8').equals(Buffer.from(bytes.subarray(0, end)))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: every UTF-8 name with its trailing NULs reads back as itself', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.nat({ max: 3 }), (text, nuls) => {
        const name = text.replace(/\0+$/, '');
        const bytes = Buffer.concat([Buffer.from(name, 'utf8'), Buffer.alloc(nuls)]);
        expect(strictServiceName(bytes)).toBe(name);
      }),
    );
  });

  it('refuses invalid UTF-8: stray continuation bytes, 0xff, truncated and overlong sequences, surrogates', () => {
    for (const bad of [[0x80], [0xff], [0xc3], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x73, 0x68, 0xfe, 0x00]])
      expect(strictServiceName(Uint8Array.from(bad)), bad.join(',')).toBeNull();
    // Internal NULs are part of a name (abb_exec:package\0install\0…); only trailing ones go.
    expect(strictServiceName(Buffer.from('abb_exec:package\0install\0\0'))).toBe('abb_exec:package\0install');
  });
});
