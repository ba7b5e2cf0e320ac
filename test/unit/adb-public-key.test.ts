/**
 * adbkey.fixturePublicKey parsing and adbd's AUTH signature check, against keys made by the real `adb keygen`
 * (test-only keys in test/fixtures/adbkey/) and signatures made the way adb's client makes them
 * (`RSA_sign(NID_sha1, token)`: PKCS#1 v1.5 over the SHA-1 DigestInfo holding the raw token).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ADB_KEY_STRUCT_BYTES,
  parseAdbPublicKey,
  verifyAdbAuthSignature,
} from '../../src/adb/adb-public-key.ts';
import { BridgeError } from '../../src/errors.ts';
import {
  ADB_KEY_DIR,
  adbSign,
  fixturePrivateKey,
  fixturePublicKey,
  otherPrivateKey,
  otherPublicKey,
} from '../support/adb-keys.ts';

function problem(text: string): string {
  try {
    parseAdbPublicKey(text);
  } catch (err) {
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).code).toBe('INVALID_ARGUMENT');
    return (err as BridgeError).message;
  }
  throw new Error('parsed');
}

describe('parseAdbPublicKey', () => {
  it('reads a key made by adb keygen: the modulus matches the private key', () => {
    const parsed = parseAdbPublicKey(fixturePublicKey);
    expect(parsed.comment).toMatch(/@/);
    expect(parsed.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    const jwk = parsed.key.export({ format: 'jwk' });
    const privJwk = fixturePrivateKey.export({ format: 'jwk' });
    expect(jwk.n).toBe(privJwk.n);
    expect(jwk.e).toBe(privJwk.e);
    expect(parseAdbPublicKey(otherPublicKey).fingerprint).not.toBe(parsed.fingerprint);
  });

  it('accepts the base64 alone, and ignores the comment in the fingerprint', () => {
    const base64 = fixturePublicKey.split(' ')[0]!;
    expect(parseAdbPublicKey(base64).fingerprint).toBe(parseAdbPublicKey(fixturePublicKey).fingerprint);
    expect(parseAdbPublicKey(`${base64} someone@else\n`).comment).toBe('someone@else');
  });

  it('names the problem of a bad key', () => {
    const base64 = fixturePublicKey.split(' ')[0]!;
    const struct = Buffer.from(base64, 'base64');
    expect(problem('')).toMatch(/empty/);
    expect(problem(readFileSync(path.join(ADB_KEY_DIR, 'adbkey'), 'utf8'))).toMatch(/one line|base64/);
    expect(problem(struct.subarray(0, 100).toString('base64'))).toMatch(/100 bytes, expected 524/);
    const words = Buffer.from(struct);
    words.writeUInt32LE(32, 0);
    expect(problem(words.toString('base64'))).toMatch(/32 words/);
    const n0 = Buffer.from(struct);
    n0.writeUInt32LE(n0.readUInt32LE(4) ^ 2, 4);
    expect(problem(n0.toString('base64'))).toMatch(/n0inv/);
    expect(problem(`${base64}\nsecond line`)).toMatch(/one line/);
  });

  it('property: any text either parses or is INVALID_ARGUMENT', () => {
    const base64 = fixturePublicKey.split(' ')[0]!;
    const struct = Buffer.from(base64, 'base64');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 800 }),
          fc.uint8Array({ minLength: 0, maxLength: 600 }).map((b) => Buffer.from(b).toString('base64')),
          // One byte of the real struct changed.
          fc
            .tuple(fc.integer({ min: 0, max: ADB_KEY_STRUCT_BYTES - 1 }), fc.integer({ min: 1, max: 255 }))
            .map(([at, x]) => {
              const b = Buffer.from(struct);
              b[at]! ^= x;
              return b.toString('base64');
            }),
        ),
        (text) => {
          try {
            const parsed = parseAdbPublicKey(text);
            expect(parsed.fingerprint).toMatch(/^sha256:/);
          } catch (err) {
            expect(err).toBeInstanceOf(BridgeError);
            expect((err as BridgeError).code).toBe('INVALID_ARGUMENT');
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('verifyAdbAuthSignature', () => {
  const key = parseAdbPublicKey(fixturePublicKey).key;

  it("accepts the registered key's signature of the token, and nothing else", () => {
    const token = randomBytes(20);
    expect(verifyAdbAuthSignature(key, token, adbSign(fixturePrivateKey, token))).toBe(true);
    // Another key, another token, a signature over a hashed token (node's ordinary sign) are refused.
    expect(verifyAdbAuthSignature(key, token, adbSign(otherPrivateKey, token))).toBe(false);
    expect(verifyAdbAuthSignature(key, randomBytes(20), adbSign(fixturePrivateKey, token))).toBe(false);
    expect(verifyAdbAuthSignature(key, token.subarray(0, 19), adbSign(fixturePrivateKey, token))).toBe(false);
  });

  it('property: a changed signature byte is refused; random signatures are refused', () => {
    const token = randomBytes(20);
    const good = adbSign(fixturePrivateKey, token);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: good.length - 1 }),
        fc.integer({ min: 1, max: 255 }),
        fc.uint8Array({ minLength: 0, maxLength: 300 }),
        (at, x, random) => {
          const bad = Buffer.from(good);
          bad[at]! ^= x;
          expect(verifyAdbAuthSignature(key, token, bad)).toBe(false);
          expect(verifyAdbAuthSignature(key, token, random)).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});
