/**
 * The console's server side through the HTTP app: sign-in (token → HttpOnly SameSite=Strict session
 * cookie), the cookie on the API with its CSRF token, sign-out, admin-only controls, loopback-only
 * without tokens, assets with cache headers. Happy / error / security. (The pages in a real browser:
 * test/e2e/console-browser.test.ts.)
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_FORM_MAX_BYTES } from '../../src/server/routes/console.ts';
import {
  ADB_TOKEN,
  ADMIN_TOKEN,
  CLIENT_TOKEN,
  SHELL_TOKEN,
  type TestBridge,
  testBridge,
  testTokens,
} from '../support/bridge.ts';

/** A form post framed as a browser frames it (Content-Length: requests with an address need it). */
const form = (fields: Record<string, string>) => {
  const body = new URLSearchParams(fields).toString();
  return {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': String(body.length) },
    body,
  };
};

describe('console with tokens', () => {
  let bridge: TestBridge;
  beforeAll(async () => {
    bridge = await testBridge({ auth: testTokens({ withShell: true, withAdb: true }) });
  });
  afterAll(async () => bridge?.cleanup());

  /** Sign in; the session cookie (name=value) and the page's CSRF token. */
  const signIn = async (token: string) => {
    const res = await bridge.app.request('/console/sign-in', form({ token }));
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/devices');
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^devicebridge_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).not.toContain(token);
    const cookie = setCookie.split(';')[0]!;
    const page = await bridge.app.request('/console/devices', { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    const text = await page.text();
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(text)?.[1] ?? '';
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    return { cookie, csrf, page: text, headers: page.headers };
  };

  it('signs in an admin: pages show who, admin controls, CSP and no-store', async () => {
    const { page, headers } = await signIn(ADMIN_TOKEN);
    expect(page).toContain('Signed in as <strong>ops</strong> (tenant acme, admin)');
    expect(page).toContain('id="register-device"');
    expect(headers.get('cache-control')).toBe('no-store');
    expect(headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page).not.toContain(ADMIN_TOKEN);
  });

  it('a client sees no admin controls, and the API refuses admin routes to its cookie', async () => {
    const { cookie, page } = await signIn(CLIENT_TOKEN);
    expect(page).not.toContain('id="register-device"');
    const releases = await (
      await bridge.app.request('/console/releases', { headers: { Cookie: cookie } })
    ).text();
    expect(releases).not.toContain('id="publish"');
    expect(releases).toContain('id="helpers"');
    expect((await bridge.app.request('/metrics', { headers: { Cookie: cookie } })).status).toBe(403);
  });

  it("pages show the token's capabilities; the leases page offers an adb endpoint only with adb", async () => {
    const leasesPage = async (token: string) => {
      const { cookie, page } = await signIn(token);
      expect(page).toContain('id="capabilities"');
      return (await bridge.app.request('/console/leases', { headers: { Cookie: cookie } })).text();
    };
    const cases: Array<[string, string, boolean]> = [
      [CLIENT_TOKEN, 'Your token may: nothing beyond its role', false],
      [SHELL_TOKEN, 'Your token may: shell', false],
      [ADB_TOKEN, 'Your token may: adb', true],
      [ADMIN_TOKEN, 'Your token may: shell, adb', true],
    ];
    for (const [token, line, adb] of cases) {
      const page = await leasesPage(token);
      expect(page, line).toContain(`<span id="capabilities">${line}</span>`);
      expect(page.includes('id="adb-endpoint"'), line).toBe(adb);
      if (!adb) expect(page).toContain('needs the adb capability');
    }
  });

  it('the cookie authenticates API reads; state-changing calls need the CSRF token', async () => {
    const { cookie, csrf } = await signIn(ADMIN_TOKEN);
    expect((await bridge.app.request('/metrics', { headers: { Cookie: cookie } })).status).toBe(200);
    const body = JSON.stringify({ name: 'x' });
    const json = { 'Content-Type': 'application/json', Cookie: cookie };
    const refused = await bridge.app.request('/v1/manifests/validate', {
      method: 'POST',
      headers: json,
      body,
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('CSRF');
    const wrong = await bridge.app.request('/v1/manifests/validate', {
      method: 'POST',
      headers: { ...json, 'X-CSRF-Token': `${csrf.slice(1)}x` },
      body,
    });
    expect(wrong.status).toBe(403);
    const ok = await bridge.app.request('/v1/manifests/validate', {
      method: 'POST',
      headers: { ...json, 'X-CSRF-Token': csrf },
      body,
    });
    expect(ok.status).toBe(200);
  });

  it('a wrong token gets the form again (401) and no cookie; no session means the sign-in page', async () => {
    const res = await bridge.app.request('/console/sign-in', form({ token: 'nope' }));
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(await res.text()).toContain('That token is not valid.');
    for (const cookie of ['', 'devicebridge_session=forged', `devicebridge_session=${'a'.repeat(43)}`]) {
      const page = await bridge.app.request('/console/leases', { headers: cookie ? { Cookie: cookie } : {} });
      expect(page.status, cookie).toBe(302);
      expect(page.headers.get('location')).toBe('/console/sign-in');
    }
  });

  it('sign-out needs the CSRF token, then ends the session', async () => {
    const { cookie, csrf } = await signIn(CLIENT_TOKEN);
    const forged = await bridge.app.request('/console/sign-out', {
      ...form({ csrf: 'x' }),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
    });
    expect(forged.status).toBe(403);
    const out = await bridge.app.request('/console/sign-out', {
      ...form({ csrf }),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
    });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toMatch(/devicebridge_session=;.*Max-Age=0/);
    expect((await bridge.app.request('/console/devices', { headers: { Cookie: cookie } })).status).toBe(302);
    expect((await bridge.app.request('/metrics', { headers: { Cookie: cookie } })).status).toBe(401);
  });

  it('sign-in and sign-out take only a small url-encoded form (415 other types, 413 past the limit)', async () => {
    for (const route of ['/console/sign-in', '/console/sign-out']) {
      const json = await bridge.app.request(route, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token: ADMIN_TOKEN }),
      });
      expect(json.status, route).toBe(415);
      expect(((await json.json()) as { error: { message: string } }).error.message).toContain(
        'application/x-www-form-urlencoded',
      );
      const multipart = new FormData();
      multipart.set('token', ADMIN_TOKEN);
      const parts = await bridge.app.request(route, { method: 'POST', body: multipart });
      expect(parts.status, route).toBe(415);
      const huge = await bridge.app.request(route, form({ token: 'x'.repeat(CONSOLE_FORM_MAX_BYTES) }));
      expect(huge.status, route).toBe(413);
      expect(((await huge.json()) as { error: { message: string } }).error.message).toContain(
        `${CONSOLE_FORM_MAX_BYTES} bytes`,
      );
    }
  });

  it('a url-encoded form under the limit is read (a bad token: 401); past the limit it is 413 (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ maxLength: 20 }), fc.string({ maxLength: 60 }), { maxKeys: 5 }),
        fc.nat({ max: 2 * CONSOLE_FORM_MAX_BYTES }),
        async (fields, padding) => {
          const all = { ...fields, padding: 'p'.repeat(padding) };
          const body = new URLSearchParams(all).toString();
          const res = await bridge.app.request('/console/sign-in', form(all));
          // A token that is not valid (or no token) is the form again; never a 5xx.
          expect(res.status).toBe(body.length > CONSOLE_FORM_MAX_BYTES ? 413 : 401);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('serves the script and stylesheet with ETags; versioned URLs are immutable', async () => {
    const page = await (await bridge.app.request('/console/sign-in')).text();
    expect(page).toContain('/console/assets/console.css');
    const js = await bridge.app.request('/console/assets/console.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('text/javascript');
    expect(js.headers.get('cache-control')).toBe('no-cache');
    const etag = js.headers.get('etag')!;
    expect(await js.text()).toContain('csrf-token');
    const hash = etag.slice(1, -1);
    const versioned = await bridge.app.request(`/console/assets/console.js?v=${hash}`);
    expect(versioned.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const again = await bridge.app.request('/console/assets/console.js', {
      headers: { 'If-None-Match': etag },
    });
    expect(again.status).toBe(304);
    expect((await bridge.app.request('/console/assets/../../package.json')).status).toBe(404);
    expect((await bridge.app.request('/console/assets/secrets.js')).status).toBe(404);
    // The icon the pages link (a browser asked for /favicon.ico and got 404 on every page).
    expect(page).toContain('<link rel="icon" type="image/svg+xml" href="/console/assets/favicon.svg">');
    const icon = await bridge.app.request('/console/assets/favicon.svg');
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(await icon.text()).toMatch(/^<svg /);
  });
});

describe('console sign-in and the API share one failed-authentication limiter', () => {
  let bridge: TestBridge;
  beforeAll(async () => {
    bridge = await testBridge({ auth: testTokens(), env: { DEVICEBRIDGE_RATE_AUTH_FAILURES: '3' } });
  });
  afterAll(async () => bridge?.cleanup());
  const from = (address: string) => ({ incoming: { socket: { remoteAddress: address } } });

  it('a token guessed on the API from many addresses is refused at sign-in too (keyed by credential), and back', async () => {
    for (let i = 1; i <= 3; i++) {
      const res = await bridge.app.request(
        '/v1/devices',
        { headers: { Authorization: 'Bearer guessed-on-the-api' } },
        from(`10.0.1.${i}`),
      );
      expect(res.status).toBe(401);
    }
    const signIn = await bridge.app.request(
      '/console/sign-in',
      form({ token: 'guessed-on-the-api' }),
      from('10.0.1.99'),
    );
    expect(signIn.status).toBe(429);
    expect(signIn.headers.get('retry-after')).not.toBeNull();

    for (let i = 1; i <= 3; i++) {
      const res = await bridge.app.request(
        '/console/sign-in',
        form({ token: 'guessed-at-sign-in' }),
        from(`10.0.2.${i}`),
      );
      expect(res.status).toBe(401);
    }
    const api = await bridge.app.request(
      '/v1/devices',
      { headers: { Authorization: 'Bearer guessed-at-sign-in' } },
      from('10.0.2.99'),
    );
    expect(api.status).toBe(429);
    // The real token still works from an address that has not failed.
    const ok = await bridge.app.request('/console/sign-in', form({ token: ADMIN_TOKEN }), from('10.0.3.1'));
    expect(ok.status).toBe(303);
  });
});

describe('console without tokens', () => {
  let bridge: TestBridge;
  beforeAll(async () => {
    bridge = await testBridge();
  });
  afterAll(async () => bridge?.cleanup());

  it('serves loopback callers as admin with no sign-in, and refuses other addresses', async () => {
    const local = await bridge.app.request(
      '/console/devices',
      {},
      { incoming: { socket: { remoteAddress: '127.0.0.1' } } },
    );
    expect(local.status).toBe(200);
    expect(await local.text()).toContain('(tenant local, admin)');
    const remote = await bridge.app.request(
      '/console/devices',
      {},
      { incoming: { socket: { remoteAddress: '10.0.0.5' } } },
    );
    expect(remote.status).toBe(401);
  });
});
