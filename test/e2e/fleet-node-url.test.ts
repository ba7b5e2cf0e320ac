/**
 * DEVICEBRIDGE_NODE_URL (found by the container test, issue 12): behind a load balancer, the URL in
 * served apkUrls (DEVICEBRIDGE_PUBLIC_URL: the balancer's, https: or loopback http:) is not the URL
 * other nodes must forward lease-scoped calls to (this node's own address on the fleet's private
 * network, e.g. `http://bridge1:7100`). The node directory announces DEVICEBRIDGE_NODE_URL when it
 * is set, else the public URL as before.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { REDIS_URL, type ServeNode, startBridge, stopFleet } from '../support/fleet.ts';

const prefix = `test:${randomUUID()}:`;

describe('the node directory announces DEVICEBRIDGE_NODE_URL (e2e, Redis)', () => {
  const redis = new Redis(REDIS_URL);
  const nodes: ServeNode[] = [];
  let tmp: { dir: string; cleanup(): Promise<void> } | undefined;

  afterAll(async () => {
    await stopFleet({ nodes, redis, prefix, tmp });
  }, 60_000);

  const announced = async (name: string): Promise<unknown> => {
    const keys = (await redis.keys(`${prefix}*`)).filter((k) => k.endsWith(`:node:${name}`));
    expect(keys, `directory entry of ${name}`).toHaveLength(1);
    return JSON.parse((await redis.get(keys[0]!)) ?? 'null');
  };

  it('announces the node URL, not the public URL, when both are set; the public URL otherwise', async () => {
    tmp = await tempDir();
    const env = { DEVICEBRIDGE_PUBLIC_URL: 'http://127.0.0.1:8080' };
    nodes.push(
      await startBridge(path.join(tmp.dir, 'a'), {
        prefix,
        name: 'node-a',
        env: { ...env, DEVICEBRIDGE_NODE_URL: 'http://bridge-a.fleet.internal:7100' },
      }),
    );
    nodes.push(await startBridge(path.join(tmp.dir, 'b'), { prefix, name: 'node-b', env }));
    expect(await announced('node-a')).toEqual({ url: 'http://bridge-a.fleet.internal:7100' });
    expect(await announced('node-b')).toEqual({ url: 'http://127.0.0.1:8080' });
  }, 90_000);
});
