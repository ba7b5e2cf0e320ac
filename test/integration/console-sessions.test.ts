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
import { RedisSessionStore } from '../../src/console/redis-session-store.ts';
import { MemorySessionStore, type SessionStore } from '../../src/console/session-store.ts';
import {
  ConsoleSessions,
  SESSION_IDLE_MS,
  SESSION_TOUCH_MS,
  sessionKey,
} from '../../src/console/sessions.ts';
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
      const real = await sessions.create(who);
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(fc.string({ maxLength: 80 }), fc.stringMatching(/^[A-Za-z0-9_-]{43}$/)),
          async (value) => {
            fc.pre(value !== real.id);
            expect(await sessions.get(value)).toBeUndefined();
          },
        ),
        { numRuns: 300 },
      );
      expect((await sessions.get(real.id))?.principal).toEqual(who);
    });

    it('forgets a session idle longer than SESSION_IDLE_MS; use keeps it alive', async () => {
      let now = 1_000_000;
      const sessions = new ConsoleSessions({ store: make(() => now), now: () => now });
      const kept = await sessions.create(who);
      const idle = await sessions.create(who);
      for (let i = 0; i < 3; i++) {
        now += SESSION_IDLE_MS / 2;
        expect((await sessions.get(kept.id))?.csrf).toBe(kept.csrf);
      }
      expect(await sessions.get(idle.id)).toBeUndefined();
      now += SESSION_IDLE_MS + 1;
      expect(await sessions.get(kept.id)).toBeUndefined();
      expect(SESSION_TOUCH_MS).toBeLessThan(SESSION_IDLE_MS);
    });

    it('sign-out is not undone by a get that read the session just before it and then touches it', async () => {
      let now = 1_000_000;
      const inner = make(() => now);
      // A store whose reads can be held after they have read: get → delete → the get finishes.
      let hold: Promise<void> | undefined;
      const store: SessionStore = {
        get: async (key) => {
          const value = await inner.get(key);
          await hold;
          return value;
        },
        set: (key, value, ttlMs) => inner.set(key, value, ttlMs),
        touch: (key, value, ttlMs) => inner.touch(key, value, ttlMs),
        delete: (key) => inner.delete(key),
        close: () => inner.close(),
      };
      const sessions = new ConsoleSessions({ store, now: () => now });
      const s = await sessions.create(who);
      now += SESSION_TOUCH_MS; // the next get re-writes the session (moves its expiry)
      let release = () => {};
      hold = new Promise<void>((resolve) => {
        release = resolve;
      });
      const reading = sessions.get(s.id);
      await new Promise((resolve) => setTimeout(resolve, 50)); // the read has happened, the touch not
      await sessions.delete(s.id);
      release();
      hold = undefined;
      await reading;
      expect(await inner.get(sessionKey(s.id))).toBeNull();
      expect(await sessions.get(s.id)).toBeUndefined();
    });

    it('sign-out deletes the session; the principal keeps its capabilities', async () => {
      const sessions = new ConsoleSessions({ store: make(Date.now) });
      const s = await sessions.create({ ...who, capabilities: ['shell'] });
      expect((await sessions.get(s.id))?.principal.capabilities).toEqual(['shell']);
      await sessions.delete(s.id);
      expect(await sessions.get(s.id)).toBeUndefined();
    });
  });
}

describe('ConsoleSessions on Redis: shared by nodes, stored as digests', () => {
  it('a session opened through one node is honoured by another with the same CSRF token', async () => {
    const a = new ConsoleSessions({ store: stores[1]![1](Date.now) });
    const b = new ConsoleSessions({ store: stores[1]![1](Date.now) });
    const s = await a.create(who);
    expect(await b.get(s.id)).toEqual({ ...s, lastUsed: s.lastUsed });
    await b.delete(s.id);
    expect(await a.get(s.id)).toBeUndefined();
  });

  it('Redis holds the digest of the id (never the id), with an expiry; a tampered record is no session', async () => {
    const sessions = new ConsoleSessions({ store: stores[1]![1](Date.now) });
    const s = await sessions.create(who);
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
    ]) {
      await redis.set(key!, bad, 'PX', 60_000);
      expect(await sessions.get(s.id), bad).toBeUndefined();
      expect(await redis.exists(key!)).toBe(0);
    }
  });
});
