/**
 * The node heartbeat has its own Redis connection: the directory lookups every forwarded call makes
 * (`urlOf`, `alive`) cannot hold it up. The directory opens its connections itself (as a node does)
 * to the real Redis through a TCP relay the test controls: the relay can hold one connection's
 * commands back (a connection stuck behind a burst or a slow command), and it sees every connection
 * open and close.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisNodeDirectory } from '../../src/devices/redis-store.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { waitFor } from '../support/wait-for.ts';

interface Relayed {
  /** What the client sent (RESP text, for telling lookups from writes). */
  sent: string;
  /** Held: what the client sends waits here instead of reaching Redis. */
  held: Buffer[] | null;
  upstream: net.Socket;
  closed: boolean;
}

/** A TCP relay to the real Redis that can hold back one connection's commands. */
async function startRelay(): Promise<{
  url: string;
  connections: Relayed[];
  hold(c: Relayed): void;
  release(c: Relayed): void;
  close(): Promise<void>;
}> {
  const connections: Relayed[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: 6379 });
    const c: Relayed = { sent: '', held: null, upstream, closed: false };
    connections.push(c);
    sockets.add(client).add(upstream);
    client.on('data', (b: Buffer) => {
      if (c.sent.length < 64 * 1024) c.sent += b.toString('latin1');
      if (c.held !== null) c.held.push(b);
      else upstream.write(b);
    });
    upstream.on('data', (b: Buffer) => client.write(b));
    const end = () => {
      c.closed = true;
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    connections,
    hold: (c) => {
      c.held ??= [];
    },
    release: (c) => {
      const held = c.held ?? [];
      c.held = null;
      for (const b of held) c.upstream.write(b);
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const prefix = `test:${randomUUID()}:`;
const redis = new Redis('redis://127.0.0.1:6379');
let relay: Awaited<ReturnType<typeof startRelay>>;
let dir: RedisNodeDirectory | undefined;

beforeAll(async () => {
  relay = await startRelay();
});
afterEach(async () => {
  for (const c of relay.connections) relay.release(c);
  await dir?.close();
  dir = undefined;
});
afterAll(async () => {
  await relay?.close();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

/** Whether the client sent `command` (RESP: `*n\r\n$3\r\nget\r\n…`, any case). */
const sends = (c: Relayed, command: string) =>
  c.sent.toLowerCase().includes(`$${command.length}\r\n${command.toLowerCase()}\r\n`);

describe('node directory on Redis: the heartbeat connection', () => {
  it("lookups held back on their connection do not hold the heartbeat: each beat's entry is written", async () => {
    dir = new RedisNodeDirectory({ url: relay.url, prefix, logger: silentLogger() });
    const key = `${prefix}{devicebridge}:node:node-h`;
    // Both kinds of call once, so each connection this directory uses is open.
    expect(await dir.urlOf('node-h')).toBeNull();
    await dir.announce('node-h', 'http://127.0.0.1:1/beat-0', 60_000);
    const lookups = relay.connections.filter((c) => sends(c, 'GET'));
    expect(lookups).toHaveLength(1);
    relay.hold(lookups[0]!);

    // A burst of lookups, all stuck behind the held connection.
    let answered = 0;
    const burst = Array.from({ length: 200 }, (_, i) =>
      (i % 2 === 0 ? dir!.urlOf('node-h') : dir!.alive(['node-h', 'node-z'])).then(
        () => {
          answered += 1;
        },
        () => undefined,
      ),
    );
    // Heartbeats meanwhile: each one written (value and TTL, read on another connection) while
    // not one lookup has been answered.
    for (let beat = 1; beat <= 3; beat++) {
      await dir.announce('node-h', `http://127.0.0.1:1/beat-${beat}`, 60_000);
      expect(JSON.parse((await redis.get(key))!)).toEqual({ url: `http://127.0.0.1:1/beat-${beat}` });
      expect(await redis.pttl(key)).toBeGreaterThan(0);
    }
    expect(answered).toBe(0);
    // The heartbeat went on another connection than the lookups, one that never sent a lookup.
    const beats = relay.connections.filter((c) => sends(c, 'SET'));
    expect(beats).toHaveLength(1);
    expect(beats[0]).not.toBe(lookups[0]);
    expect(sends(beats[0]!, 'GET') || sends(beats[0]!, 'MGET')).toBe(false);

    // Released, the lookups are answered (with the latest beat).
    relay.release(lookups[0]!);
    await Promise.all(burst);
    expect(await dir.urlOf('node-h')).toBe('http://127.0.0.1:1/beat-3');
    // A clean shutdown's removal goes on the heartbeat connection too.
    relay.hold(lookups[0]!);
    await dir.remove('node-h');
    expect(await redis.exists(key)).toBe(0);
  });

  it('close() closes both connections', async () => {
    const before = relay.connections.length;
    dir = new RedisNodeDirectory({ url: relay.url, prefix, logger: silentLogger() });
    await dir.urlOf('node-c');
    await dir.announce('node-c', null, 60_000);
    const mine = relay.connections.slice(before);
    expect(mine).toHaveLength(2);
    expect(mine.every((c) => !c.closed)).toBe(true);
    await dir.close();
    dir = undefined;
    await waitFor(() => mine.every((c) => c.closed), { what: "the directory's connections to close" });
  });
});
