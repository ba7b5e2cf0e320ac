/**
 * Dex jars for `app_process` (the glass agent): a ZIP whose `classes.dex` (and `classes2.dex`, …)
 * define the classes. `dexClassNames` reads the class definitions of one dex file (pure, bounds
 * checked: every offset is checked against the buffer); `parseDexJar` lists the classes a jar
 * defines. Failures are `BridgeError('INVALID_ARGUMENT', 'not a valid dex jar: <reason>')`.
 *
 * Dex layout (source.android.com/docs/core/runtime/dex-format): the header holds the sizes and
 * offsets of `string_ids` (0x38/0x3c), `type_ids` (0x40/0x44) and `class_defs` (0x60/0x64); a
 * class_def (32 bytes) starts with its `class_idx` into type_ids, a type_id is a `descriptor_idx`
 * into string_ids, a string_id is the offset of a ULEB128 UTF-16 length followed by MUTF-8 bytes.
 */
import { BridgeError, isBridgeError } from '../../errors.ts';
import { findZipEntry, type RangeReads, readFromBytes, zipDirectoryReads, zipEntryReads } from './apk-zip.ts';

const DEX_MAGIC = /^dex\n0[0-9]{2}\0$/;
const HEADER_SIZE = 0x70;
const CLASS_DEF_SIZE = 32;
/** Largest classes*.dex extracted from a jar (the dex format itself caps ids at 65,536 methods). */
const MAX_DEX_BYTES = 64 << 20;

function invalidDex(reason: string, cause?: unknown): BridgeError {
  return new BridgeError(
    'INVALID_ARGUMENT',
    `not a valid dex jar: ${reason}`,
    cause === undefined ? {} : { cause },
  );
}

/** Java class names (`a.b.C`, inner classes as `a.b.C$D`) defined by one dex file, in file order. */
export function dexClassNames(dex: Uint8Array): string[] {
  if (dex.length < HEADER_SIZE) throw invalidDex('classes.dex is shorter than a dex header');
  const magic = String.fromCharCode(...dex.subarray(0, 8));
  if (!DEX_MAGIC.test(magic)) throw invalidDex('classes.dex has no dex magic');
  const dv = new DataView(dex.buffer, dex.byteOffset, dex.byteLength);
  const u32 = (at: number, what: string): number => {
    if (at < 0 || at + 4 > dex.length) throw invalidDex(`${what} lies outside classes.dex`);
    return dv.getUint32(at, true);
  };
  const stringIdsSize = u32(0x38, 'string_ids_size');
  const stringIdsOff = u32(0x3c, 'string_ids_off');
  const typeIdsSize = u32(0x40, 'type_ids_size');
  const typeIdsOff = u32(0x44, 'type_ids_off');
  const classDefsSize = u32(0x60, 'class_defs_size');
  const classDefsOff = u32(0x64, 'class_defs_off');
  if (classDefsSize > (dex.length - HEADER_SIZE) / CLASS_DEF_SIZE)
    throw invalidDex('class_defs_size is too large');

  const names: string[] = [];
  for (let i = 0; i < classDefsSize; i++) {
    const typeIdx = u32(classDefsOff + i * CLASS_DEF_SIZE, 'a class_def');
    if (typeIdx >= typeIdsSize) throw invalidDex(`class_def ${i} names type ${typeIdx} of ${typeIdsSize}`);
    const stringIdx = u32(typeIdsOff + typeIdx * 4, 'a type_id');
    if (stringIdx >= stringIdsSize)
      throw invalidDex(`type ${typeIdx} names string ${stringIdx} of ${stringIdsSize}`);
    names.push(descriptorToClassName(readMutf8(dex, u32(stringIdsOff + stringIdx * 4, 'a string_id'))));
  }
  return names;
}

/** The string at a string_data_item: ULEB128 length (UTF-16 units), then MUTF-8 bytes, then NUL. */
function readMutf8(dex: Uint8Array, at: number): string {
  let pos = at;
  for (let shift = 0; ; shift += 7) {
    if (pos >= dex.length || shift > 28) throw invalidDex('a string length lies outside classes.dex');
    const byte = dex[pos++]!;
    if ((byte & 0x80) === 0) break;
  }
  const end = dex.indexOf(0, pos);
  if (end === -1) throw invalidDex('a string is not NUL-terminated');
  // Class descriptors are ASCII in practice; MUTF-8 beyond ASCII decodes like UTF-8 except for
  // NUL and supplementary characters, which cannot occur in a valid class name anyway.
  return new TextDecoder('utf-8', { fatal: false }).decode(dex.subarray(pos, end));
}

/** `Ldev/x/Main;` → `dev.x.Main`; anything else (arrays, primitives) is refused. */
function descriptorToClassName(descriptor: string): string {
  if (!descriptor.startsWith('L') || !descriptor.endsWith(';') || descriptor.length < 3) {
    throw invalidDex(`a class_def names ${JSON.stringify(descriptor.slice(0, 80))}, not a class`);
  }
  return descriptor.slice(1, -1).replaceAll('/', '.');
}

export interface DexJarInfo {
  /** Every class the jar's classes*.dex files define. */
  classes: string[];
  /** The dex entries found (`classes.dex`, `classes2.dex`, …). */
  dexEntries: string[];
}

/** What a dex jar defines, read by ranges; refuses a ZIP without `classes.dex` (a plain Java jar cannot run on app_process). */
export function* dexJarReads(size: number): RangeReads<DexJarInfo> {
  try {
    const directory = yield* zipDirectoryReads(size);
    if (findZipEntry(directory, 'classes.dex') === undefined) {
      throw invalidDex('no classes.dex entry (app_process runs dex code: dex the jar first)');
    }
    const dexEntries = directory.entries
      .map((e) => e.name)
      .filter((n) => /^classes([2-9]|[1-9][0-9]+)?\.dex$/.test(n))
      .sort((a, b) => a.length - b.length || a.localeCompare(b));
    const classes: string[] = [];
    for (const name of dexEntries) {
      const entry = findZipEntry(directory, name)!;
      classes.push(...dexClassNames(yield* zipEntryReads(directory, entry, MAX_DEX_BYTES)));
    }
    return { classes, dexEntries };
  } catch (error) {
    if (isBridgeError(error)) {
      if (error.message.startsWith('not a valid APK: ')) {
        throw invalidDex(error.message.slice('not a valid APK: '.length), error);
      }
      throw error;
    }
    throw invalidDex((error as Error)?.message ?? String(error), error);
  }
}

/** `dexJarReads` over a jar held whole in memory. */
export function parseDexJar(bytes: Uint8Array): DexJarInfo {
  return readFromBytes(bytes, dexJarReads);
}
