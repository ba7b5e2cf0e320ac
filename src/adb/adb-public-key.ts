/**
 * adb's RSA public keys (`adbkey.pub`) and its AUTH signature check, as adbd does them. Pure: no I/O.
 *
 * `adbkey.pub` is `base64(RSAPublicKey) + " user@host"`; the struct (AOSP `android_pubkey.h`) is
 * little-endian: `u32 modulus_size_words (64)`, `u32 n0inv (-1/n[0] mod 2^32)`,
 * `u32 n[64]` (least significant word first), `u32 rr[64]` (R^2 mod n), `u32 exponent`.
 * A client answers `AUTH TOKEN` with `RSA_sign(NID_sha1, token)`: PKCS#1 v1.5 over the SHA-1
 * DigestInfo whose digest is the 20-byte token itself (the token is not hashed again).
 */
import { constants, createHash, createPublicKey, type KeyObject, publicDecrypt } from 'node:crypto';
import { BridgeError } from '../errors.ts';

/** The modulus adb uses: 2048 bits (`ANDROID_PUBKEY_MODULUS_SIZE`). */
export const ADB_KEY_MODULUS_BYTES = 256;
const WORDS = ADB_KEY_MODULUS_BYTES / 4;
/** Size of the binary struct. */
export const ADB_KEY_STRUCT_BYTES = 4 + 4 + ADB_KEY_MODULUS_BYTES * 2 + 4;
/** Length of the token adbd sends in `AUTH TOKEN` (`TOKEN_SIZE`). */
export const ADB_AUTH_TOKEN_BYTES = 20;
/** Longest `adbkey.pub` text accepted (the base64 struct is 704 characters; the comment is free text). */
export const ADB_PUBLIC_KEY_MAX_CHARS = 4096;

/** DER prefix of a SHA-1 DigestInfo (RFC 8017 §9.2 note 1). */
const SHA1_DIGEST_INFO = Buffer.from('3021300906052b0e03021a05000414', 'hex');

export interface AdbPublicKey {
  /** The key for node:crypto. */
  key: KeyObject;
  /** `sha256:<hex>` of the binary struct: names the key without repeating it. */
  fingerprint: string;
  /** The text after the base64 (`user@host`), possibly empty. */
  comment: string;
}

function invalid(problem: string): BridgeError {
  return new BridgeError('INVALID_ARGUMENT', `adb public key: ${problem}`, {
    details: { errors: [{ path: 'publicKey', message: problem }] },
  });
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The `n0inv` adb stores: -1 / n0 mod 2^32 (n0 odd). */
function n0inv(n0: number): number {
  // Newton iteration for the inverse mod 2^32: each step doubles the correct low bits.
  let inv = n0;
  for (let i = 0; i < 5; i++) inv = Math.imul(inv, 2 - Math.imul(n0, inv)) >>> 0;
  return (0x100000000 - inv) >>> 0;
}

/**
 * Parse the `adbkey.pub` text (`<base64> [comment]`, a trailing newline allowed). Anything else
 * — another encoding, a key that is not 2048-bit RSA, an inconsistent struct — is INVALID_ARGUMENT
 * naming the problem.
 */
export function parseAdbPublicKey(text: string): AdbPublicKey {
  if (typeof text !== 'string') throw invalid('expected the text of adbkey.pub');
  if (text.length > ADB_PUBLIC_KEY_MAX_CHARS)
    throw invalid(`longer than ${ADB_PUBLIC_KEY_MAX_CHARS} characters`);
  if (text.includes('\0')) throw invalid('contains a NUL character');
  const trimmed = text.replace(/^[ \t]+|[\s]+$/g, '');
  if (/[\r\n]/.test(trimmed)) throw invalid('expected one line (the content of adbkey.pub)');
  const space = trimmed.search(/[ \t]/);
  const encoded = space < 0 ? trimmed : trimmed.slice(0, space);
  const comment = space < 0 ? '' : trimmed.slice(space + 1).trim();
  if (encoded.length === 0) throw invalid('empty');
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0)
    throw invalid('the key is not base64 (expected the content of adbkey.pub, not the private key)');
  const struct = Buffer.from(encoded, 'base64');
  if (struct.length !== ADB_KEY_STRUCT_BYTES)
    throw invalid(`the key struct has ${struct.length} bytes, expected ${ADB_KEY_STRUCT_BYTES}`);
  const words = struct.readUInt32LE(0);
  if (words !== WORDS) throw invalid(`the modulus has ${words} words, expected ${WORDS} (2048-bit RSA)`);
  const modulus = Buffer.from(struct.subarray(8, 8 + ADB_KEY_MODULUS_BYTES)).reverse();
  if ((modulus[0]! & 0x80) === 0) throw invalid('the modulus is shorter than 2048 bits');
  const n0 = struct.readUInt32LE(8);
  if ((n0 & 1) === 0) throw invalid('the modulus is even');
  if (struct.readUInt32LE(4) !== n0inv(n0)) throw invalid('n0inv does not match the modulus');
  const exponent = struct.readUInt32LE(8 + ADB_KEY_MODULUS_BYTES * 2);
  if (exponent < 3 || (exponent & 1) === 0) throw invalid(`the public exponent ${exponent} is not valid`);
  const e = Buffer.alloc(4);
  e.writeUInt32BE(exponent);
  let key: KeyObject;
  try {
    key = createPublicKey({
      key: {
        kty: 'RSA',
        n: modulus.toString('base64url'),
        e: e.subarray(e.findIndex((b) => b !== 0)).toString('base64url'),
      },
      format: 'jwk',
    });
  } catch (err) {
    throw invalid(`not an RSA key (${(err as Error).message})`);
  }
  const fingerprint = `sha256:${createHash('sha256').update(struct).digest('hex')}`;
  return { key, fingerprint, comment };
}

/**
 * Whether `signature` is the key's `RSA_sign(NID_sha1, token)` (what adbd's `adb_auth_verify`
 * accepts). Any malformed signature is simply false.
 */
export function verifyAdbAuthSignature(key: KeyObject, token: Uint8Array, signature: Uint8Array): boolean {
  if (token.length !== ADB_AUTH_TOKEN_BYTES || signature.length !== ADB_KEY_MODULUS_BYTES) return false;
  let decoded: Buffer;
  try {
    decoded = publicDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, signature);
  } catch {
    return false;
  }
  const expected = Buffer.concat([SHA1_DIGEST_INFO, token]);
  return decoded.length === expected.length && decoded.equals(expected);
}
