/**
 * APKs are read by ranges, never whole: `readApkInfo` on a file reads the ZIP directory from the
 * end and then only the entries it decodes. A real APK padded with a 200 MiB stored entry is parsed
 * reading a few KiB (counted through the range reader) with the process's peak RSS growing far
 * less than the file. Property tests: the range reader over a file answers what the whole-buffer
 * reader answers on random archives (our own writer, and the system `zip`), and what they hold.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readApkInfo, readFileRanges } from '../../src/artifacts/apk-file.ts';
import { parseApkInfo } from '../../src/protocol/apk/apk-reader.ts';
import {
  crc32,
  extractZipEntry,
  readZipDirectory,
  type ZipDirectory,
  zipDirectoryReads,
  zipEntryReads,
} from '../../src/protocol/apk/apk-zip.ts';

const FIXTURE = join(import.meta.dirname, '../fixtures/apk/snapshot-helper-v2.apk');
const PAD_MIB = 200;

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'apk-range-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The fixture APK with a stored entry of `mib` MiB added by the system `zip` (the whole file grows). */
async function paddedApk(mib: number): Promise<string> {
  const apk = join(dir, `padded-${mib}.apk`);
  await copyFile(FIXTURE, apk);
  const pad = join(dir, 'assets-pad.bin');
  execFileSync('truncate', ['-s', `${mib}M`, pad]);
  execFileSync('zip', ['-q', '-0', '-j', apk, pad]);
  rmSync(pad);
  return apk;
}

describe('readApkInfo reads a large APK by ranges', () => {
  it(`a real APK padded to ${PAD_MIB}+ MiB: a few KiB read, peak RSS far below the file size`, async () => {
    const apk = await paddedApk(PAD_MIB);
    const size = statSync(apk).size;
    expect(size).toBeGreaterThan(PAD_MIB * 1024 * 1024);
    // In a fresh process, so its peak RSS (maxRSS) is this parse's and nothing else's.
    const script = [
      `import { readApkInfo } from ${JSON.stringify(join(import.meta.dirname, '../../src/artifacts/apk-file.ts'))};`,
      'const before = process.resourceUsage().maxRSS;',
      'let bytesRead = 0; let reads = 0;',
      'const info = await readApkInfo(process.argv[1], { onRead: (_o, n) => { bytesRead += n; reads += 1; } });',
      'const after = process.resourceUsage().maxRSS;',
      'console.log(JSON.stringify({ growthKiB: after - before, bytesRead, reads, info }));',
    ].join('\n');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script, apk],
      { timeout: 60_000 },
    );
    const answer = JSON.parse(stdout.trim()) as {
      growthKiB: number;
      bytesRead: number;
      reads: number;
      info: Record<string, unknown>;
    };
    // Same metadata as the unpadded APK's (zip -0 keeps every entry; signers as the range reader sees them).
    const original = parseApkInfo(readFileSync(FIXTURE));
    const { signerCertSha256: _signers, ...manifest } = original;
    expect(answer.info).toMatchObject(manifest);
    expect(answer.reads).toBeGreaterThan(0);
    expect(answer.bytesRead).toBeLessThan(1024 * 1024);
    expect(answer.growthKiB * 1024).toBeLessThan(size / 8);
  }, 120_000);

  it('the range reader never asks for bytes outside the file, and reads each byte at most once on a real APK', async () => {
    const ranges: Array<[number, number]> = [];
    const size = statSync(FIXTURE).size;
    const info = await readApkInfo(FIXTURE, { onRead: (o, n) => ranges.push([o, n]) });
    expect(info).toEqual(parseApkInfo(readFileSync(FIXTURE)));
    for (const [offset, length] of ranges) {
      expect(offset).toBeGreaterThanOrEqual(0);
      expect(offset + length).toBeLessThanOrEqual(size);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Property tests: the range reader over a file vs the whole-buffer reader, on random archives.

interface Entry {
  name: string;
  data: Uint8Array;
  deflate: boolean;
}

/** A ZIP writer (stored and deflated entries, optional leading junk and archive comment). */
function writeZip(entries: Entry[], prefix: Uint8Array, comment: Uint8Array): Uint8Array {
  const locals: Buffer[] = [Buffer.from(prefix)];
  const centrals: Buffer[] = [];
  let offset = prefix.length;
  for (const { name, data, deflate } of entries) {
    const nameBytes = Buffer.from(name, 'utf8');
    const stored = deflate ? deflateRawSync(data) : Buffer.from(data);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(deflate ? 8 : 0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(stored.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(deflate ? 8 : 0, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(stored.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, stored);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + stored.length;
  }
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  eocd.writeUInt16LE(comment.length, 20);
  return Buffer.concat([...locals, cd, eocd, Buffer.from(comment)]);
}

/** Every entry of the archive file, read by ranges: the directory and each entry's content. */
async function readAllByRanges(file: string): Promise<{ directory: ZipDirectory; contents: Uint8Array[] }> {
  const directory = await readFileRanges(file, zipDirectoryReads);
  const contents: Uint8Array[] = [];
  for (const entry of directory.entries) {
    contents.push(await readFileRanges(file, () => zipEntryReads(directory, entry, 1 << 20)));
  }
  return { directory, contents };
}

function readAllWhole(bytes: Uint8Array): { directory: ZipDirectory; contents: Uint8Array[] } {
  const directory = readZipDirectory(bytes);
  return {
    directory,
    contents: directory.entries.map((entry) => extractZipEntry(bytes, directory, entry, 1 << 20)),
  };
}

const entryArb = fc.record({
  name: fc.stringMatching(/^[A-Za-z0-9_./-]{1,40}$/),
  data: fc.uint8Array({ maxLength: 3000 }),
  deflate: fc.boolean(),
});

describe('range ZIP reader: same answers as the whole-buffer reader', () => {
  it('property: random archives (stored/deflated, leading junk, comment) read alike and as written', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(entryArb, { maxLength: 12 }),
        fc.uint8Array({ maxLength: 200 }),
        // Long comments push the directory out of the tail the reader reads first.
        fc.oneof(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ minLength: 60_000, maxLength: 65_535 })),
        async (entries, prefix, comment) => {
          // A comment holding the end-of-directory signature is ambiguous to any reader: left out.
          fc.pre(!Buffer.from(comment).includes(Buffer.from([0x50, 0x4b, 0x05, 0x06])));
          const bytes = writeZip(entries, prefix, comment);
          const file = join(dir, `prop-${n++}.zip`);
          writeFileSync(file, bytes);
          const whole = readAllWhole(bytes);
          const ranged = await readAllByRanges(file);
          expect(ranged.directory).toEqual(whole.directory);
          expect(ranged.contents.map((c) => Buffer.from(c))).toEqual(
            whole.contents.map((c) => Buffer.from(c)),
          );
          expect(ranged.directory.entries.map((e) => e.name)).toEqual(entries.map((e) => e.name));
          expect(ranged.contents.map((c) => Buffer.from(c))).toEqual(entries.map((e) => Buffer.from(e.data)));
          rmSync(file);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('property: archives written by the system zip read alike, with the bytes unzip extracts', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(
          fc.record({
            name: fc.stringMatching(/^[a-z0-9_]{1,12}$/),
            data: fc.uint8Array({ maxLength: 5000 }),
          }),
          { minLength: 1, maxLength: 6, selector: (e) => e.name },
        ),
        fc.constantFrom('-0', '-6', '-9'),
        async (entries, level) => {
          const work = join(dir, `zip-${n++}`);
          execFileSync('mkdir', ['-p', work]);
          for (const e of entries) writeFileSync(join(work, e.name), e.data);
          const archive = join(work, 'out.zip');
          execFileSync('zip', ['-q', '-X', level, archive, ...entries.map((e) => e.name)], { cwd: work });
          const bytes = readFileSync(archive);
          const whole = readAllWhole(bytes);
          const ranged = await readAllByRanges(archive);
          expect(ranged.directory).toEqual(whole.directory);
          expect(ranged.contents.map((c) => Buffer.from(c))).toEqual(
            whole.contents.map((c) => Buffer.from(c)),
          );
          for (const [i, entry] of ranged.directory.entries.entries()) {
            const unzipped = execFileSync('unzip', ['-p', archive, entry.name], { maxBuffer: 1 << 24 });
            expect(Buffer.from(ranged.contents[i]!)).toEqual(unzipped);
          }
          rmSync(work, { recursive: true, force: true });
        },
      ),
      { numRuns: 25 },
    );
  });
});
