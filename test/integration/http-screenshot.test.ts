/**
 * `GET /v1/leases/{id}/screenshot` through the HTTP app: `screencap -p` on a simulated device over
 * the real adb server (exec service), a valid PNG of the device's wm size, ETag / 304, typed errors,
 * tenant isolation. Happy / error / security.
 */
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crc32, PNG_MAGIC, readPngHeader } from '../../src/protocol/helper/png-header.ts';
import {
  ADMIN_TOKEN,
  CLIENT_TOKEN,
  type DeviceBridge,
  OTHER_TENANT_TOKEN,
  testDeviceBridge,
  testTokens,
} from '../support/bridge.ts';
import { contractProblems } from '../support/contract.ts';

interface Json {
  id: string;
  error: { code: string; message: string };
}

describe('screenshot', () => {
  let bridge: DeviceBridge;
  const request = (token: string | null, path: string, init: RequestInit = {}) =>
    bridge.app.request(path, {
      ...init,
      headers: {
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...(init.headers as Record<string, string> | undefined),
      },
    });
  const json = async (token: string | null, method: string, path: string, body?: unknown) => {
    const res = await request(token, path, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const parsed = (await res.json()) as Json;
    expect(contractProblems(method, path, res.status, parsed)).toEqual([]);
    return { status: res.status, body: parsed };
  };

  beforeAll(async () => {
    bridge = await testDeviceBridge({ auth: testTokens(), simulate: 1 });
  });
  afterAll(async () => bridge?.cleanup());

  it('answers a valid PNG of the wm size; ETag → 304; a tap changes the screen', async () => {
    const lease = (await json(CLIENT_TOKEN, 'POST', '/v1/leases', {})).body;
    const path = `/v1/leases/${lease.id}/screenshot`;
    const res = await request(CLIENT_TOKEN, path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    const png = new Uint8Array(await res.arrayBuffer());
    expect([...png.subarray(0, 8)]).toEqual([...PNG_MAGIC]);
    const header = readPngHeader(png);
    const record = bridge.node.simulator!.devices[0]!;
    const wm = await bridge.node.adb.client.shell(record.serial, 'wm size');
    expect(wm.stdout.toString()).toContain(`${header.width}x${header.height}`);
    expect(res.headers.get('x-screen-width')).toBe(String(header.width));
    // Every chunk's CRC holds and the IDAT inflates to height rows of (filter byte + RGB pixels).
    const buf = Buffer.from(png);
    let at = 8;
    const idat: Buffer[] = [];
    while (at < buf.length) {
      const len = buf.readUInt32BE(at);
      expect(crc32(buf.subarray(at + 4, at + 8 + len))).toBe(buf.readUInt32BE(at + 8 + len));
      if (buf.toString('latin1', at + 4, at + 8) === 'IDAT') idat.push(buf.subarray(at + 8, at + 8 + len));
      at += 12 + len;
    }
    expect(inflateSync(Buffer.concat(idat)).length).toBe(header.height * (1 + header.width * 3));

    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const again = await request(CLIENT_TOKEN, path, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);

    const tap = await json(CLIENT_TOKEN, 'POST', `/v1/leases/${lease.id}/gestures`, {
      kind: 'tap',
      x: 300,
      y: 900,
    });
    expect(tap.status).toBe(200);
    const changed = await request(CLIENT_TOKEN, path, { headers: { 'If-None-Match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    await json(CLIENT_TOKEN, 'DELETE', `/v1/leases/${lease.id}`);
  });

  it('typed errors: 400 for a bad deadline, 410 for a released lease, 404 for an unknown one', async () => {
    const lease = (await json(CLIENT_TOKEN, 'POST', '/v1/leases', {})).body;
    const bad = await json(CLIENT_TOKEN, 'GET', `/v1/leases/${lease.id}/screenshot?deadlineMs=0`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_ARGUMENT');
    expect(bad.body.error.message).toContain('deadlineMs');
    await json(CLIENT_TOKEN, 'DELETE', `/v1/leases/${lease.id}`);
    const ended = await json(CLIENT_TOKEN, 'GET', `/v1/leases/${lease.id}/screenshot`);
    expect(ended.status).toBe(410);
    expect(ended.body.error.code).toBe('LEASE_EXPIRED');
    const unknown = await json(CLIENT_TOKEN, 'GET', '/v1/leases/no-such-lease/screenshot');
    expect(unknown.status).toBe(404);
  });

  it("another tenant's lease is 404 and anonymous callers 401; admins may look", async () => {
    const lease = (await json(CLIENT_TOKEN, 'POST', '/v1/leases', {})).body;
    const path = `/v1/leases/${lease.id}/screenshot`;
    const theirs = await json(OTHER_TENANT_TOKEN, 'GET', path);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe('NOT_FOUND');
    expect((await json(null, 'GET', path)).status).toBe(401);
    expect((await request(ADMIN_TOKEN, path)).status).toBe(200);
    await json(CLIENT_TOKEN, 'DELETE', `/v1/leases/${lease.id}`);
  });
});
