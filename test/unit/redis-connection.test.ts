/** The Redis connection factory and key builder, without opening a socket. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { closeRedis, describeRedisUrl, openRedis, parseRedisUrl } from '../../src/redis/connection.ts';
import { checkKeyPrefix, KeySpace } from '../../src/redis/keys.ts';

function code(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(BridgeError);
    return (err as BridgeError).code;
  }
  throw new Error('expected a BridgeError');
}

describe('parseRedisUrl', () => {
  it('accepts redis:// and rediss:// (no host = the default host); refuses other schemes and non-URLs', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379').port).toBe('6379');
    expect(parseRedisUrl('rediss://u:p@cache.example:6380/2').hostname).toBe('cache.example');
    expect(parseRedisUrl('redis://').hostname).toBe('');
    for (const bad of ['http://127.0.0.1:6379', 'redis//x', '127.0.0.1:6379', '', 'unix:/tmp/r']) {
      expect(
        code(() => parseRedisUrl(bad)),
        bad,
      ).toBe('INVALID_ARGUMENT');
    }
  });
});

const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
const secret = fc.string({ minLength: 1, maxLength: 20 });

describe('describeRedisUrl', () => {
  it('keeps scheme, host, port and database; any user or password becomes ***', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('redis', 'rediss'),
        fc.array(label, { minLength: 1, maxLength: 3 }),
        fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
        fc.option(fc.integer({ min: 0, max: 15 }), { nil: undefined }),
        fc.option(secret, { nil: undefined }),
        fc.option(secret, { nil: undefined }),
        (scheme, labels, port, db, user, password) => {
          const host = labels.join('.');
          const auth =
            user === undefined && password === undefined
              ? ''
              : `${encodeURIComponent(user ?? '')}${password === undefined ? '' : `:${encodeURIComponent(password)}`}@`;
          const tail = `${port === undefined ? '' : `:${port}`}${db === undefined ? '' : `/${db}`}`;
          const described = describeRedisUrl(`${scheme}://${auth}${host}${tail}`);
          const hasCredentials = (user ?? '') !== '' || (password ?? '') !== '';
          const defaultPort = port === undefined ? '' : `:${port}`;
          expect(described).toBe(
            `${scheme}://${hasCredentials ? '***@' : ''}${host}${defaultPort}${db === undefined ? '' : `/${db}`}`,
          );
        },
      ),
    );
  });

  it('never throws and never echoes a password, whatever the input', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(typeof describeRedisUrl(text)).toBe('string');
      }),
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9]{12,24}$/), (password) => {
        expect(describeRedisUrl(`redis://user:${password}@host.example:6379/0`)).not.toContain(password);
      }),
    );
  });
});

describe('openRedis', () => {
  it('is lazy: nothing is dialled until the first command, and closing an unused one is immediate', async () => {
    const client = openRedis({ url: 'redis://127.0.0.1:1', role: 'test' });
    expect(client.status).toBe('wait');
    await closeRedis(client);
    expect(client.status).toBe('end');
    await closeRedis(client);
    expect(client.status).toBe('end');
  });

  it('refuses a URL that is not redis:// or rediss:// before building a client', () => {
    expect(code(() => openRedis({ url: 'http://127.0.0.1:6379', role: 'test' }))).toBe('INVALID_ARGUMENT');
  });
});

describe('KeySpace', () => {
  it('builds <prefix>{tag}:<kind>[:<id>] and refuses a prefix with a brace', () => {
    const space = new KeySpace('dev:', '{leases}');
    expect(space.base).toBe('dev:{leases}:');
    expect(space.key('active')).toBe('dev:{leases}:active');
    expect(space.key('q', '["{odd}"]')).toBe('dev:{leases}:q:["{odd}"]');
    expect(code(() => new KeySpace('a{b', '{leases}'))).toBe('INVALID_ARGUMENT');
    expect(code(() => checkKeyPrefix('}'))).toBe('INVALID_ARGUMENT');
    expect(() => new KeySpace('x', 'leases')).toThrow(/hash tag/);
  });

  it('every key of any accepted prefix hashes on the store tag (the first {...} of the key)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (prefix, kind, id) => {
        fc.pre(!/[{}]/.test(prefix) && !/[{}]/.test(kind));
        const key = new KeySpace(prefix, '{devicebridge}').key(kind, id);
        const open = key.indexOf('{');
        expect(key.slice(open, key.indexOf('}', open) + 1)).toBe('{devicebridge}');
      }),
    );
  });
});
