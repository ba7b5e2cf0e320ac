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

/** `count` fresh adbkey.pub texts, each made by the real `adb keygen` (distinct clients' keys). */
export async function freshAdbPublicKeys(count: number): Promise<string[]> {
  const { readFile } = await import('node:fs/promises');
  const { tempDir } = await import('./bridge.ts');
  const { runProcess } = await import('./cli.ts');
  const tmp = await tempDir('devicebridge-adbkeys-');
  try {
    return await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const file = path.join(tmp.dir, `adbkey-${i}`);
        const gen = await runProcess('adb', ['keygen', file], { env: { HOME: tmp.dir }, timeoutMs: 30_000 });
        if (gen.code !== 0) throw new Error(`adb keygen failed: ${gen.stderr}`);
        return readFile(`${file}.pub`, 'utf8');
      }),
    );
  } finally {
    await tmp.cleanup();
  }
}
