/**
 * Test-only adb keys made by the real `adb keygen` (test/fixtures/adbkey/) and the signature adb's
 * client sends in AUTH SIGNATURE: `RSA_sign(NID_sha1, token)`, PKCS#1 v1.5 over the SHA-1
 * DigestInfo that holds the raw 20-byte token (written from the RSA spec, not from our verifier).
 */
import { constants, createPrivateKey, type KeyObject, privateEncrypt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const ADB_KEY_DIR = path.resolve(import.meta.dirname, '../fixtures/adbkey');
const read = (name: string) => readFileSync(path.join(ADB_KEY_DIR, name), 'utf8');

/** The registered key: its adbkey.pub text and its private key. */
export const fixturePublicKey = read('adbkey.pub');
export const fixturePrivateKey: KeyObject = createPrivateKey(read('adbkey'));
/** Another client's key. */
export const otherPublicKey = read('other-adbkey.pub');
export const otherPrivateKey: KeyObject = createPrivateKey(read('other-adbkey'));

const SHA1_DIGEST_INFO_PREFIX = Buffer.from('3021300906052b0e03021a05000414', 'hex');

/** What adb's client answers to AUTH TOKEN with `key`. */
export function adbSign(key: KeyObject, token: Uint8Array): Buffer {
  return privateEncrypt(
    { key, padding: constants.RSA_PKCS1_PADDING },
    Buffer.concat([SHA1_DIGEST_INFO_PREFIX, token]),
  );
}
