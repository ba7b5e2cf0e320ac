import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Authenticator, hashToken, samePrincipal, sessionTokenRef } from '../../src/auth/tokens.ts';
import { BridgeError } from '../../src/errors.ts';
import { ADMIN_TOKEN, CLIENT_TOKEN, SHELL_TOKEN, testTokens } from '../support/bridge.ts';

describe('Authenticator', () => {
  it('hashToken is the sha256 of the token as UTF-8, hex (the tokens file format), and finds the token (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 80 }), (token) => {
        const hex = createHash('sha256').update(Buffer.from(token, 'utf8')).digest('hex');
        expect(hashToken(token)).toBe(hex);
      }),
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[\x21-\x7e]{1,64}$/), (token) => {
        const auth = new Authenticator([
          { name: 'n', tenant: 't', role: 'client', sha256: hashToken(token) },
        ]);
        expect(auth.authenticate(`Bearer ${token}`, undefined)).toMatchObject({ name: 'n' });
      }),
      { numRuns: 50 },
    );
  });

  it('resolves tokens by hash to their principal', () => {
    const auth = testTokens();
    expect(auth.authenticate(`Bearer ${ADMIN_TOKEN}`, '10.0.0.5')).toEqual({
      name: 'ops',
      tenant: 'acme',
      role: 'admin',
    });
    expect(auth.authenticate(`Bearer ${CLIENT_TOKEN}`, undefined)).toMatchObject({ role: 'client' });
    expect(auth.authenticate(undefined, '10.0.0.5')).toBeNull();
    expect(() => auth.authenticate('Bearer nope', undefined)).toThrow(/unknown token/);
    expect(() => auth.authenticate(`Basic ${ADMIN_TOKEN}`, undefined)).toThrow(/Bearer/);
  });

  it('a console session token reference resolves to whom the token names now, and is neither token nor hash', () => {
    const auth = testTokens({ withShell: true });
    for (const token of [ADMIN_TOKEN, CLIENT_TOKEN, SHELL_TOKEN]) {
      const ref = sessionTokenRef(hashToken(token));
      expect(ref).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(ref).not.toContain(token);
      expect(Buffer.from(ref, 'base64url').toString('hex')).not.toBe(hashToken(token));
      expect(sessionTokenRef(hashToken(token).toUpperCase())).toBe(ref);
      expect(auth.principalOfSession(ref)).toEqual(auth.authenticate(`Bearer ${token}`, undefined));
    }
    expect(auth.principalOfSession(sessionTokenRef(hashToken('revoked')))).toBeNull();
    expect(new Authenticator([]).principalOfSession(sessionTokenRef(hashToken(ADMIN_TOKEN)))).toBeNull();
  });

  it('property: arbitrary session token references resolve to nobody and never throw', () => {
    const auth = testTokens({ withShell: true });
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 100 }), fc.stringMatching(/^[A-Za-z0-9_-]{43}$/)),
        (ref) => {
          expect(auth.principalOfSession(ref)).toBeNull();
        },
      ),
      { numRuns: 500 },
    );
  });

  it('samePrincipal compares name, tenant, role and the set of capabilities', () => {
    const p = { name: 'ci', tenant: 'acme', role: 'client' as const };
    expect(samePrincipal(p, { ...p })).toBe(true);
    expect(samePrincipal(p, { ...p, capabilities: [] })).toBe(true);
    expect(samePrincipal({ ...p, capabilities: ['shell'] }, { ...p, capabilities: ['shell', 'shell'] })).toBe(
      true,
    );
    expect(samePrincipal(p, { ...p, capabilities: ['shell'] })).toBe(false);
    expect(samePrincipal(p, { ...p, role: 'admin' })).toBe(false);
    expect(samePrincipal(p, { ...p, tenant: 'globex' })).toBe(false);
    expect(samePrincipal(p, { ...p, name: 'other' })).toBe(false);
  });

  it('without tokens treats loopback callers as admin and refuses others', () => {
    const auth = new Authenticator([]);
    expect(auth.enabled).toBe(false);
    expect(auth.authenticate(undefined, '127.0.0.1')?.role).toBe('admin');
    expect(auth.authenticate(undefined, '::ffff:127.0.0.1')?.role).toBe('admin');
    expect(auth.authenticate(undefined, '::1')?.role).toBe('admin');
    expect(() => auth.authenticate(undefined, '192.168.1.2')).toThrow(BridgeError);
  });

  it('parses a tokens file and names the bad entry', () => {
    const good = JSON.stringify([
      { name: 'a', tenant: 't', role: 'client', sha256: hashToken('x').toUpperCase() },
    ]);
    expect(Authenticator.fromJson(good).authenticate('Bearer x', undefined)?.name).toBe('a');
    expect(() => Authenticator.fromJson('[{"name":"a","tenant":"t","role":"root","sha256":"00"}]')).toThrow(
      /\[0\]\.role/,
    );
    expect(() => Authenticator.fromJson('{')).toThrow(/not valid JSON/);
    const dup = JSON.stringify([
      { name: 'a', tenant: 't', role: 'client', sha256: hashToken('x') },
      { name: 'b', tenant: 't', role: 'admin', sha256: hashToken('x') },
    ]);
    expect(() => Authenticator.fromJson(dup)).toThrow(/\[1\]: duplicate/);
  });

  it('tokens-file parse errors name line and column, never the content; duplicate and prototype keys are refused by name', () => {
    const secret = hashToken('the-secret-token');
    const broken = `[\n  {"name": "ops", "tenant": "acme", "role": "admin",\n   "sha256": "${secret}" oops}\n]`;
    const err = (() => {
      try {
        Authenticator.fromJson(broken, 'DEVICEBRIDGE_TOKENS_FILE');
      } catch (e) {
        return e as BridgeError;
      }
      throw new Error('accepted a broken tokens file');
    })();
    expect(err).toBeInstanceOf(BridgeError);
    expect(err.message).toMatch(/^DEVICEBRIDGE_TOKENS_FILE: .*line 3, column \d+/);
    expect(err.message).not.toContain(secret.slice(0, 8));
    expect(err.message).not.toContain('oops');
    expect(err.message).not.toContain('acme');

    const dup = `[{"name":"a","tenant":"t","role":"client","sha256":"${secret}","role":"admin"}]`;
    expect(() => Authenticator.fromJson(dup)).toThrow(/duplicate key "role"/);
    const proto = `[{"name":"a","tenant":"t","role":"client","sha256":"${secret}","__proto__":{"role":"admin"}}]`;
    expect(() => Authenticator.fromJson(proto)).toThrow(/"__proto__"/);
  });

  it('property: arbitrary headers never authenticate and never throw anything but BridgeError', () => {
    const auth = testTokens();
    fc.assert(
      fc.property(fc.string(), (header) => {
        try {
          const p = auth.authenticate(header, undefined);
          // Only the empty header is anonymous; any other accepted header must carry a real token.
          if (p !== null) expect([`Bearer ${ADMIN_TOKEN}`, `Bearer ${CLIENT_TOKEN}`]).toContain(header);
        } catch (err) {
          expect(err).toBeInstanceOf(BridgeError);
        }
      }),
    );
  });
});
