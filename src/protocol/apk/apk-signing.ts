/**
 * Signer certificates of an APK (pure). This extracts who *claims* to have signed the APK; it does
 * not verify signatures or digests (the device's package manager does that on install).
 *
 * - APK Signature Scheme v2/v3: the APK Signing Block right before the ZIP central directory
 *   (https://source.android.com/docs/security/features/apksigning/v2). Per signer: the first
 *   certificate of its signed data.
 * - v1 (JAR signing): `META-INF/*.RSA|DSA|EC`, a PKCS#7 SignedData; the certificate matching the
 *   first SignerInfo's issuer and serial number.
 */
import { createHash } from 'node:crypto';
import { invalidApk, type RangeReads, readFromBytes, type ZipDirectory, zipEntryReads } from './apk-zip.ts';

export const APK_SIGNATURE_SCHEME_V2_ID = 0x7109871a;
export const APK_SIGNATURE_SCHEME_V3_ID = 0xf05368c0;
const SIG_BLOCK_MAGIC = 'APK Sig Block 42';
const MAX_SIGNATURE_FILE = 1 << 20;

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A bounds-checked little-endian cursor over [start, end) of `bytes`. */
class Cursor {
  readonly #bytes: Uint8Array;
  readonly #dv: DataView;
  readonly #end: number;
  readonly #what: string;
  #pos: number;

  constructor(bytes: Uint8Array, start: number, end: number, what: string) {
    this.#bytes = bytes;
    this.#dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#pos = start;
    this.#end = end;
    this.#what = what;
  }

  get remaining(): number {
    return this.#end - this.#pos;
  }

  #need(n: number): void {
    if (n > this.remaining) throw invalidApk(`${this.#what} is truncated`);
  }

  u32(): number {
    this.#need(4);
    const value = this.#dv.getUint32(this.#pos, true);
    this.#pos += 4;
    return value;
  }

  /** A uint64 that must fit in a JS safe integer range we care about (< 2^32 here). */
  u64(): number {
    const low = this.u32();
    const high = this.u32();
    if (high !== 0) throw invalidApk(`${this.#what} has an out-of-range 64-bit length`);
    return low;
  }

  /** A uint32-length-prefixed sub-range, returned as its own cursor. */
  lengthPrefixed(what: string): Cursor {
    const length = this.u32();
    this.#need(length);
    const sub = new Cursor(this.#bytes, this.#pos, this.#pos + length, what);
    this.#pos += length;
    return sub;
  }

  take(n: number): Uint8Array {
    this.#need(n);
    const slice = this.#bytes.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    return slice;
  }
}

/** Largest APK Signing Block read (real ones are a few KiB; Android reads it whole too). */
export const MAX_SIGNING_BLOCK = 16 << 20;

/**
 * Reads the APK Signing Block, if any, into `id -> value`: its 24-byte footer right before the
 * central directory, then the block. Returns undefined when the APK has no signing block (v1-only
 * or unsigned).
 */
export function* signingBlockReads(directory: ZipDirectory): RangeReads<Map<number, Uint8Array> | undefined> {
  const cdOffset = directory.centralDirectoryOffset;
  if (cdOffset < 32) return undefined;
  const tail = yield { offset: cdOffset - 24, length: 24 };
  const magic = new TextDecoder('latin1').decode(tail.subarray(8, 24));
  if (magic !== SIG_BLOCK_MAGIC) return undefined;

  const footer = new Cursor(tail, 0, 8, 'APK Signing Block footer');
  const size = footer.u64();
  // size counts everything after the leading size field: pairs + trailing size + magic.
  if (size < 24 || size + 8 > cdOffset) throw invalidApk('APK Signing Block size is out of range');
  if (size + 8 > MAX_SIGNING_BLOCK) {
    throw invalidApk(`APK Signing Block is too large (${size + 8} > ${MAX_SIGNING_BLOCK} bytes)`);
  }
  const block = yield { offset: cdOffset - size - 8, length: size + 8 };
  const header = new Cursor(block, 0, 8, 'APK Signing Block header');
  if (header.u64() !== size) throw invalidApk('APK Signing Block sizes disagree');

  const pairs = new Cursor(block, 8, block.length - 24, 'APK Signing Block');
  const values = new Map<number, Uint8Array>();
  while (pairs.remaining > 0) {
    const length = pairs.u64();
    if (length < 4) throw invalidApk('APK Signing Block entry is too short');
    const id = pairs.u32();
    const value = pairs.take(length - 4);
    if (!values.has(id)) values.set(id, value);
  }
  return values;
}

/** `signingBlockReads` over an APK held whole in memory. */
export function readSigningBlock(
  bytes: Uint8Array,
  directory: ZipDirectory,
): Map<number, Uint8Array> | undefined {
  return readFromBytes(bytes, () => signingBlockReads(directory));
}

/**
 * v2 and v3 share this prefix: signers (length-prefixed sequence of length-prefixed signer), each
 * signer starting with length-prefixed signed data = digests, certificates, ...
 */
export function signerCertificatesFromSchemeBlock(value: Uint8Array, scheme: string): Uint8Array[] {
  const outer = new Cursor(value, 0, value.length, `${scheme} block`);
  const signers = outer.lengthPrefixed(`${scheme} signers`);
  const certificates: Uint8Array[] = [];
  while (signers.remaining > 0) {
    const signer = signers.lengthPrefixed(`${scheme} signer`);
    const signedData = signer.lengthPrefixed(`${scheme} signed data`);
    signedData.lengthPrefixed(`${scheme} digests`);
    const certs = signedData.lengthPrefixed(`${scheme} certificates`);
    if (certs.remaining === 0) throw invalidApk(`${scheme} signer has no certificate`);
    const first = certs.lengthPrefixed(`${scheme} certificate`);
    if (first.remaining === 0) throw invalidApk(`${scheme} certificate is empty`);
    certificates.push(first.take(first.remaining));
  }
  if (certificates.length === 0) throw invalidApk(`${scheme} block has no signers`);
  return certificates;
}

// --- minimal DER walker for v1 PKCS#7 ---------------------------------------------------------

interface Tlv {
  tag: number;
  /** Offset of the tag byte. */
  start: number;
  contentStart: number;
  end: number;
}

function readTlv(bytes: Uint8Array, pos: number, limit: number): Tlv {
  if (pos + 2 > limit) throw invalidApk('v1 signature block: truncated DER');
  const tag = bytes[pos] ?? 0;
  if ((tag & 0x1f) === 0x1f) throw invalidApk('v1 signature block: unsupported DER tag');
  const first = bytes[pos + 1] ?? 0;
  let length: number;
  let contentStart: number;
  if (first < 0x80) {
    length = first;
    contentStart = pos + 2;
  } else {
    const count = first & 0x7f;
    if (count === 0) throw invalidApk('v1 signature block: indefinite DER length');
    if (count > 4) throw invalidApk('v1 signature block: DER length too large');
    if (pos + 2 + count > limit) throw invalidApk('v1 signature block: truncated DER');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[pos + 2 + i] ?? 0);
    contentStart = pos + 2 + count;
  }
  const end = contentStart + length;
  if (end > limit) throw invalidApk('v1 signature block: truncated DER');
  return { tag, start: pos, contentStart, end };
}

function children(bytes: Uint8Array, parent: Tlv): Tlv[] {
  const list: Tlv[] = [];
  let pos = parent.contentStart;
  while (pos < parent.end) {
    const child = readTlv(bytes, pos, parent.end);
    list.push(child);
    pos = child.end;
  }
  return list;
}

function expect(tlv: Tlv | undefined, tag: number, what: string): Tlv {
  if (tlv === undefined || tlv.tag !== tag) throw invalidApk(`v1 signature block: expected ${what}`);
  return tlv;
}

function sameBytes(bytes: Uint8Array, a: Tlv, b: Tlv): boolean {
  if (a.end - a.start !== b.end - b.start) return false;
  for (let i = 0; i < a.end - a.start; i++) {
    if (bytes[a.start + i] !== bytes[b.start + i]) return false;
  }
  return true;
}

const OID_SIGNED_DATA = Uint8Array.of(0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02);

/** The signer certificate (DER) of a PKCS#7 SignedData blob, as in `META-INF/CERT.RSA`. */
export function signerCertificateFromPkcs7(bytes: Uint8Array): Uint8Array {
  const contentInfo = expect(readTlv(bytes, 0, bytes.length), 0x30, 'ContentInfo SEQUENCE');
  const [oid, explicit] = children(bytes, contentInfo);
  const oidTlv = expect(oid, 0x06, 'content type OID');
  const oidBytes = bytes.subarray(oidTlv.contentStart, oidTlv.end);
  if (oidBytes.length !== OID_SIGNED_DATA.length || oidBytes.some((b, i) => b !== OID_SIGNED_DATA[i])) {
    throw invalidApk('v1 signature block: not PKCS#7 SignedData');
  }
  const [signedData] = children(bytes, expect(explicit, 0xa0, 'SignedData content'));
  const parts = children(bytes, expect(signedData, 0x30, 'SignedData SEQUENCE'));
  const certificatesTlv = parts.find((tlv) => tlv.tag === 0xa0);
  const signerInfos = parts.at(-1);
  if (certificatesTlv === undefined) throw invalidApk('v1 signature block: no certificates');
  const certificates = children(bytes, certificatesTlv).filter((tlv) => tlv.tag === 0x30);
  if (certificates.length === 0) throw invalidApk('v1 signature block: no certificates');

  // SignerInfo ::= SEQUENCE { version, sid IssuerAndSerialNumber { issuer, serialNumber }, ... }
  const [signerInfo] = children(bytes, expect(signerInfos, 0x31, 'SignerInfos SET'));
  const sid = children(bytes, expect(signerInfo, 0x30, 'SignerInfo'))[1];
  const [issuer, serial] = children(bytes, expect(sid, 0x30, 'IssuerAndSerialNumber'));
  const wantIssuer = expect(issuer, 0x30, 'signer issuer');
  const wantSerial = expect(serial, 0x02, 'signer serial number');
  for (const certificate of certificates) {
    // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version?, serialNumber, signature, issuer, ... } }
    const [tbs] = children(bytes, certificate);
    const fields = children(bytes, expect(tbs, 0x30, 'TBSCertificate'));
    const offset = fields[0]?.tag === 0xa0 ? 1 : 0;
    const certSerial = fields[offset];
    const certIssuer = fields[offset + 2];
    if (certSerial === undefined || certIssuer === undefined) continue;
    if (sameBytes(bytes, certSerial, wantSerial) && sameBytes(bytes, certIssuer, wantIssuer)) {
      return bytes.subarray(certificate.start, certificate.end);
    }
  }
  throw invalidApk('v1 signature block: no certificate matches the signer');
}

const V1_SIGNATURE_FILE = /^META-INF\/[^/]+\.(RSA|DSA|EC)$/i;

/**
 * sha256 (lower hex) of each signer's certificate: v2 preferred, then v3, then v1; [] if unsigned.
 * Reads only the signing block, or the v1 signature files.
 */
export function* signerCertSha256Reads(directory: ZipDirectory): RangeReads<string[]> {
  const block = yield* signingBlockReads(directory);
  const v2 = block?.get(APK_SIGNATURE_SCHEME_V2_ID);
  if (v2 !== undefined) return signerCertificatesFromSchemeBlock(v2, 'v2').map(sha256Hex);
  const v3 = block?.get(APK_SIGNATURE_SCHEME_V3_ID);
  if (v3 !== undefined) return signerCertificatesFromSchemeBlock(v3, 'v3').map(sha256Hex);

  const digests: string[] = [];
  const files = directory.entries.filter((entry) => V1_SIGNATURE_FILE.test(entry.name));
  files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of files) {
    const pkcs7 = yield* zipEntryReads(directory, entry, MAX_SIGNATURE_FILE);
    digests.push(sha256Hex(signerCertificateFromPkcs7(pkcs7)));
  }
  return digests;
}

/** `signerCertSha256Reads` over an APK held whole in memory. */
export function signerCertSha256s(bytes: Uint8Array, directory: ZipDirectory): string[] {
  return readFromBytes(bytes, () => signerCertSha256Reads(directory));
}
