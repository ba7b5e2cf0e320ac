/**
 * Concurrent uploads on one node: APKs being published (admin) or installed on a lease are counted
 * per tenant from the moment the call is admitted until it is answered; past the tenant's limit the
 * next is refused at once with 429 naming it, another tenant is not affected, and a place is free
 * again when an upload is answered. The uploads here are held open by bodies that have not ended.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_UPLOAD_LIMITS } from '../../src/server/upload-gate.ts';
import {
  ADMIN_TOKEN,
  type DeviceBridge,
  OTHER_TENANT_TOKEN,
  testDeviceBridge,
  testTokens,
} from '../support/bridge.ts';

let bridge: DeviceBridge;
beforeAll(async () => {
  bridge = await testDeviceBridge({ auth: testTokens(), simulate: 1 });
});
afterAll(async () => bridge?.cleanup());

/** An upload whose body stays open until `end()`; `answer` settles with the call's status. */
function heldUpload(token: string, path: string) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      c.enqueue(new TextEncoder().encode('PK not quite an apk'));
    },
  });
  const answer = Promise.resolve(
    bridge.app.request(path, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/octet-stream' },
      body,
      duplex: 'half',
    } as RequestInit),
  ).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });
  return { answer, end: () => controller.close() };
}

const publish = (token: string, version: string) =>
  heldUpload(token, `/v1/helpers/upload-gate-test/releases?version=${version}`);

describe('concurrent uploads', () => {
  it("past a tenant's limit the next upload is 429 naming it; another tenant is not affected; a place frees when answered", async () => {
    const { perTenant } = DEFAULT_UPLOAD_LIMITS;
    const held = Array.from({ length: perTenant }, (_, i) => publish(ADMIN_TOKEN, `0.0.${i + 1}`));
    // Admitted: each is being received (their bodies have not ended), so none is answered yet.
    const early = await Promise.race([
      Promise.all(held.map((h) => h.answer)).then(() => 'answered'),
      (async () => {
        for (;;) {
          const probe = publish(ADMIN_TOKEN, '0.0.99');
          probe.end();
          const status = await probe.answer;
          if (status === 429) return 'refused';
        }
      })(),
    ]);
    expect(early).toBe('refused');

    const refused = await bridge.app.request('/v1/helpers/upload-gate-test/releases?version=0.0.9', {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/octet-stream' },
      body: 'x',
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    const err = ((await refused.json()) as { error: { message: string; details: { limit: string } } }).error;
    expect(err.details.limit).toBe('uploads-per-tenant');
    expect(err.message).toContain(`at most ${perTenant} at a time`);

    // Another tenant's upload is admitted (and answered on its own merits: not an APK, not an admin).
    const other = heldUpload(OTHER_TENANT_TOKEN, '/v1/helpers/upload-gate-test/releases?version=0.0.8');
    other.end();
    expect(await other.answer).not.toBe(429);

    // The held uploads end: answered (not APKs), and the tenant may upload again.
    for (const h of held) h.end();
    expect((await Promise.all(held.map((h) => h.answer))).every((s) => s === 400)).toBe(true);
    const again = publish(ADMIN_TOKEN, '0.0.10');
    again.end();
    expect(await again.answer).toBe(400);
  });
});
