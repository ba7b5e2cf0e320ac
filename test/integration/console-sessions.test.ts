/**
 * Console sessions on each store: this node's memory and real Redis (random key prefix). Cookie
 * values from outside never resolve to a session; ids are stored only as digests; a stored record
 * that does not parse is no session; idle sessions expire; two ConsoleSessions on one Redis (two
 * nodes) see the same session and CSRF token.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ConsoleSessions,
  SESSION_IDLE_MS,
  SESSION_TOUCH_MS,
  sessionKey,
} from '../../src/auth/console-sessions.ts';
import { RedisSessionStore } from '../../src/auth/redis-session-store.ts';
import { MemorySessionStore, type SessionStore } from '../../src/auth/session-store.ts';
import { Authenticator, CAPABILITIES, hashToken, sessionTokenRef } from '../../src/auth/tokens.ts';
import { deleteKeys, REDIS_URL } from '../support/fleet.ts';

const prefix = `test:${randomUUID()}:`;
const redis = new Redis(REDIS_URL);
const opened: SessionStore[] = [];

afterAll(async () => {
  for (const s of opened) await s.close();
  await deleteKeys(redis, prefix);
  await redis.quit();
});

const who = { name: 'ci', tenant: 'acme', role: 'client' as const };
const shellWho = { ...who, name: 'ci-shell', capabilities: ['shell' as const] };
/** The tokens the sessions are opened with, and the references the sessions keep of them. */
const TOKEN = 'ci-token-1';
const SHELL_TOKEN = 'ci-shell-token-1';
const ref = sessionTokenRef(hashToken(TOKEN));
const shellRef = sessionTokenRef(hashToken(SHELL_TOKEN));
const tokens = new Authenticator([
  { ...who, sha256: hashToken(TOKEN) },
  { ...shellWho, sha256: hashToken(SHELL_TOKEN) },
]);

const stores: Array<[string, (now: () => number) => SessionStore]> = [
  ['memory', (now) => new MemorySessionStore({ now })],
  [
    'redis',
    () => {
      const store = new RedisSessionStore({ url: REDIS_URL, prefix });
      opened.push(store);
      return store;
    },
  ],
];

for (const [name, make] of stores) {
  describe(`ConsoleSessions on the ${name} store`, () => {
    it('arbitrary cookie values never resolve to a session (and never throw)', async () => {
      const sessions = new ConsoleSessions({ store: make(Date.now) });
      const real = await sessions.create(who, ref);
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(fc.string({ maxLength: 80 }), fc.stringMatching(/^[A-Za-z0-9_-]{43}$/)),
          async (value) => {
            fc.pre(value !== real.id);
            expect(await sessions.get(value, tokens)).toBeUndefined();
          },
        ),
        { numRuns: 300 },
      );
      expect((await sessions.get(real.id, tokens))?.principal).toEqual(who);
    });

    it('forgets a session idle longer than SESSION_IDLE_MS; use keeps it alive', async () => {
      let now = 1_000_000;
      const sessions = new ConsoleSessions({ store: make(() => now), now: () => now });
      const kept = await sessions.create(who, ref);
      const idle = await sessions.create(who, ref);
      for (let i = 0; i < 3; i++) {
        now += SESSION_IDLE_MS / 2;
        expect((await sessions.get(kept.id, tokens))?.csrf).toBe(kept.csrf);
      }
      expect(await sessions.get(idle.id, tokens)).toBeUndefined();
      now += SESSION_IDLE_MS + 1;
      expect(await sessions.get(kept.id, tokens)).toBeUndefined();
      expect(SESSION_TOUCH_MS).toBeLessThan(SESSION_IDLE_MS);
    });

    it('a session follows its token as configured now: gone or naming someone else → dropped for good', async () => {
      const sessions = new ConsoleSessions({ store: make(Date.now) });
      await fc.assert(
        fc.asyncProperty(
          fc.option(
            fc.record(
              {
                name: fc.constantFrom('ci', 'ci2'),
                tenant: fc.constantFrom('acme', 'globex'),
                role: fc.constantFrom('client' as const, 'admin' as const),
                capabilities: fc.subarray([...CAPABILITIES]),
              },
              { requiredKeys: ['name', 'tenant', 'role'] },
            ),
            { nil: undefined },
          ),
          async (entry) => {
            const s = await sessions.create(who, ref);
            // The tokens file now: TOKEN under `entry` (or not at all), beside another token.
            const now = new Authenticator([
              { ...shellWho, sha256: hashToken(SHELL_TOKEN) },
              ...(entry === undefined ? [] : [{ ...entry, sha256: hashToken(TOKEN) }]),
            ]);
            const same =
              entry !== undefined &&
              entry.name === 'ci' &&
              entry.tenant === 'acme' &&
              entry.role === 'client' &&
              (entry.capabilities ?? []).length === 0;
            const got = await sessions.get(s.id, now);
            expect(got?.principal, JSON.stringify(entry)).toEqual(same ? who : undefined);
            // Dropped for good: the token as it was does not bring the session back.
            expect((await sessions.get(s.id, tokens)) !== undefined).toBe(same);
            await sessions.delete(s.id);
          },
        ),
        { numRuns: 60 },
      );
      // No tokens at all (loopback-only): no session.
      const s = await sessions.create(who, ref);
      expect(await sessions.get(s.id, new Authenticator([]))).toBeUndefined();
    });

    it('touch replaces only what exists: it never re-creates a deleted or expired entry', async () => {
      let now = 1_000_000;
      const store = make(() => now);
      const key = sessionKey(randomUUID());
      expect(await store.touch(key, 'x', 60_000)).toBe(false);
      expect(await store.get(key)).toBeNull();
      await store.set(key, 'a', 60_000);
      expect(await store.touch(key, 'b', 60_000)).toBe(true);
      expect(await store.get(key)).toBe('b');
      await store.delete(key);
      expect(await store.touch(key, 'c', 60_000)).toBe(false);
      expect(await store.get(key)).toBeNull();
      if (name === 'memory') {
        await store.set(key, 'a', 1_000);
        now += 1_000;
        expect(await store.touch(key, 'b', 60_000)).toBe(false);
        expect(await store.get(key)).toBeNull();
      }
    });

    it('sign-out is not undone by a get that read the session just before it and then touches it', async () => {
      let now = 1_000_000;
      const inner = make(() => now);
      // A store whose reads can be held after they have read: get → delete → the get finishes.
      let hold: Promise<void> | undefined;
      let read = () => {};
      const store: SessionStore = {
        get: async (key) => {
          const value = await inner.get(key);
          read();
          await hold;
          return value;
        },
        set: (key, value, ttlMs) => inner.set(key, value, ttlMs),
        touch: (key, value, ttlMs) => inner.touch(key, value, ttlMs),
        delete: (key) => inner.delete(key),
        close: () => inner.close(),
      };
      const sessions = new ConsoleSessions({ store, now: () => now });
      const s = await sessions.create(who, ref);
      now += SESSION_TOUCH_MS; // the next get re-writes the session (moves its expiry)
      let release = () => {};
      hold = new Promise<void>((resolve) => {
        release = resolve;
      });
      const hasRead = new Promise<void>((resolve) => {
        read = resolve;
      });
      const reading = sessions.get(s.id, tokens);
      await hasRead; // the read has happened, the touch not yet
      await sessions.delete(s.id);
      release();
      hold = undefined;
      // The get that read before the sign-out finds the session gone when it touches it.
      expect(await reading).toBeUndefined();
      expect(await inner.get(sessionKey(s.id))).toBeNull();
      expect(await sessions.get(s.id, tokens)).toBeUndefined();
    });

    it('sign-out deletes the session; the principal keeps its capabilities', async () => {
      const sessions = new ConsoleSessions({ store: make(Date.now) });
      const s = await sessions.create(shellWho, shellRef);
      expect((await sessions.get(s.id, tokens))?.principal.capabilities).toEqual(['shell']);
      await sessions.delete(s.id);
      expect(await sessions.get(s.id, tokens)).toBeUndefined();
    });
  });
}

describe('ConsoleSessions on Redis: shared by nodes, stored as digests', () => {
  it('a session opened through one node is honoured by another with the same CSRF token', async () => {
    const a = new ConsoleSessions({ store: stores[1]![1](Date.now) });
    const b = new ConsoleSessions({ store: stores[1]![1](Date.now) });
    const s = await a.create(who, ref);
    expect(await b.get(s.id, tokens)).toEqual({ ...s, lastUsed: s.lastUsed });
    await b.delete(s.id);
    expect(await a.get(s.id, tokens)).toBeUndefined();
  });

  it('Redis holds the digest of the id (never the id), with an expiry; a tampered record is no session', async () => {
    const sessions = new ConsoleSessions({ store: stores[1]![1](Date.now) });
    const s = await sessions.create(who, ref);
    const keys = await redis.keys(`${prefix}*`);
    expect(keys.some((k) => k.includes(s.id))).toBe(false);
    const key = keys.find((k) => k.endsWith(sessionKey(s.id)));
    expect(key).toBeDefined();
    const ttl = await redis.pttl(key!);
    expect(ttl).toBeGreaterThan(SESSION_IDLE_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(SESSION_IDLE_MS);
    expect(await redis.get(key!)).not.toContain(s.id);
    for (const bad of [
      'not json',
      '{}',
      JSON.stringify({ csrf: s.csrf, principal: { ...who, role: 'root' }, lastUsed: 1 }),
      // A record of before sessions named their token: it cannot be checked against the tokens.
      JSON.stringify({ csrf: s.csrf, principal: who, lastUsed: Date.now() }),
      JSON.stringify({ csrf: s.csrf, principal: who, tokenRef: 'not-a-ref', lastUsed: Date.now() }),
    ]) {
      await redis.set(key!, bad, 'PX', 60_000);
      expect(await sessions.get(s.id, tokens), bad).toBeUndefined();
      expect(await redis.exists(key!)).toBe(0);
    }
  });
});
