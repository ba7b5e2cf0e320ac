/**
 * Builds minimal dex files and jars for tests, written from the dex format documentation
 * (source.android.com/docs/core/runtime/dex-format) and the ZIP specification (APPNOTE 4.3), not
 * from the parser under test: a header, string_ids + string data (ULEB128 length, MUTF-8, NUL),
 * type_ids and 32-byte class_defs; and a ZIP of stored entries. Checksums and the SHA-1 signature
 * of the dex header are left zero (nothing on the host checks them).
 */
import { crc32 } from '../../src/protocol/apk/apk-zip.ts';

function uleb128(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

/** A dex file defining `classNames` (`a.b.C`), in that order. */
export function buildDex(classNames: readonly string[]): Uint8Array {
  const HEADER = 0x70;
  const descriptors = [...new Set(classNames.map((c) => `L${c.replaceAll('.', '/')};`))].sort();
  const n = descriptors.length;
  const stringIdsOff = HEADER;
  const typeIdsOff = stringIdsOff + 4 * n;
  const classDefsOff = typeIdsOff + 4 * n;
  const dataOff = classDefsOff + 32 * classNames.length;
  const data: number[] = [];
  const stringOffsets: number[] = [];
  for (const d of descriptors) {
    stringOffsets.push(dataOff + data.length);
    const bytes = new TextEncoder().encode(d);
    data.push(...uleb128(d.length), ...bytes, 0);
  }
  const size = dataOff + data.length;
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  out.set(new TextEncoder().encode('dex\n035\0'), 0);
  dv.setUint32(0x20, size, true); // file_size
  dv.setUint32(0x24, HEADER, true); // header_size
  dv.setUint32(0x28, 0x12345678, true); // endian_tag
  dv.setUint32(0x38, n, true);
  dv.setUint32(0x3c, stringIdsOff, true);
  dv.setUint32(0x40, n, true);
  dv.setUint32(0x44, typeIdsOff, true);
  dv.setUint32(0x60, classNames.length, true);
  dv.setUint32(0x64, classDefsOff, true);
  dv.setUint32(0x68, data.length, true); // data_size
  dv.setUint32(0x6c, dataOff, true); // data_off
  descriptors.forEach((_, i) => {
    dv.setUint32(stringIdsOff + 4 * i, stringOffsets[i]!, true);
    dv.setUint32(typeIdsOff + 4 * i, i, true); // type i -> string i (both sorted)
  });
  classNames.forEach((c, i) => {
    const at = classDefsOff + 32 * i;
    dv.setUint32(at, descriptors.indexOf(`L${c.replaceAll('.', '/')};`), true); // class_idx
    dv.setUint32(at + 8, 0xffffffff, true); // superclass_idx: NO_INDEX
    dv.setUint32(at + 16, 0xffffffff, true); // source_file_idx: NO_INDEX
  });
  out.set(data, dataOff);
  return out;
}

/** A ZIP archive of stored (uncompressed) entries. */
export function buildZip(entries: ReadonlyArray<{ name: string; data: Uint8Array }>): Uint8Array {
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const { name, data } of entries) {
    const nameBytes = new TextEncoder().encode(name);
    const crc = crc32(data);
    const local = new Uint8Array(30 + nameBytes.length);
    const lv = new DataView(local.buffer);
    lv.setUint32(0, 0x04034b50, true);
    lv.setUint16(4, 10, true); // version needed
    lv.setUint32(14, crc, true);
    lv.setUint32(18, data.length, true);
    lv.setUint32(22, data.length, true);
    lv.setUint16(26, nameBytes.length, true);
    local.set(nameBytes, 30);
    const header = new Uint8Array(46 + nameBytes.length);
    const hv = new DataView(header.buffer);
    hv.setUint32(0, 0x02014b50, true);
    hv.setUint16(4, 20, true);
    hv.setUint16(6, 10, true);
    hv.setUint32(16, crc, true);
    hv.setUint32(20, data.length, true);
    hv.setUint32(24, data.length, true);
    hv.setUint16(28, nameBytes.length, true);
    hv.setUint32(42, offset, true);
    header.set(nameBytes, 46);
    parts.push(local, data);
    central.push(header);
    offset += local.length + data.length;
  }
  const centralSize = central.reduce((sum, h) => sum + h.length, 0);
  const eocd = new Uint8Array(22);
  const ev = new DataView(eocd.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, entries.length, true);
  ev.setUint16(10, entries.length, true);
  ev.setUint32(12, centralSize, true);
  ev.setUint32(16, offset, true);
  return Buffer.concat([...parts, ...central, eocd]);
}

/** A dex jar (`classes.dex` defining `classNames`). */
export function buildDexJar(classNames: readonly string[]): Uint8Array {
  return buildZip([{ name: 'classes.dex', data: buildDex(classNames) }]);
}
