/**
 * Browser requests at the edge: which `Host` names loopback (a DNS-rebound name does not), and
 * when a request is a page of another origin (Sec-Fetch-Site first, else Origin against Host).
 * The middleware itself runs end to end in test/e2e/hostile-load.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crossSiteReason, isLoopbackHostHeader } from '../../src/server/middleware/browser-requests.ts';

describe('isLoopbackHostHeader', () => {
  it('loopback names and addresses, with any port or none', () => {
    for (const host of [
      'localhost',
      'LOCALHOST:7100',
      'console.localhost:1',
      '127.0.0.1',
      '127.0.0.1:7100',
      '127.255.3.4:65535',
      '[::1]',
      '[::1]:7100',
      '[0:0:0:0:0:0:0:1]:80',
      '[::ffff:127.0.0.1]:7100',
    ]) {
      expect(isLoopbackHostHeader(host), host).toBe(true);
    }
  });

  it('anything else: other names (rebinding), other addresses, malformed forms', () => {
    for (const host of [
      'rebind.attacker.example',
      'rebind.attacker.example:7100',
      'localhost.attacker.example',
      '127.0.0.1.nip.io',
      '10.0.0.1:7100',
      '0.0.0.0:7100',
      '::1',
      '[::1',
      '[::2]:7100',
      '127.1',
      '2130706433',
      '0x7f.1',
      '127.0.0.1:7100:1',
      'user@127.0.0.1',
      '127.0.0.1/x',
      '',
      ' localhost',
    ]) {
      expect(isLoopbackHostHeader(host), host).toBe(false);
    }
  });

  it('a name with a label after the loopback part is never loopback (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('localhost', '127.0.0.1', 'a.localhost'),
        fc.domain(),
        (loopback, domain) => {
          expect(isLoopbackHostHeader(`${loopback}.${domain}`)).toBe(false);
          expect(isLoopbackHostHeader(`${loopback}.${domain}:7100`)).toBe(false);
        },
      ),
    );
  });
});

describe('crossSiteReason', () => {
  const host = '127.0.0.1:7100';
  const post = { method: 'POST', host };

  it('no browser headers: not a browser page (the CLI, the typed client, curl)', () => {
    expect(crossSiteReason(post)).toBeNull();
    expect(crossSiteReason({ method: 'GET', host })).toBeNull();
  });

  it('Sec-Fetch-Site decides when present', () => {
    expect(crossSiteReason({ ...post, fetchSite: 'same-origin' })).toBeNull();
    expect(crossSiteReason({ ...post, fetchSite: 'none' })).toBeNull();
    expect(crossSiteReason({ ...post, fetchSite: 'cross-site' })).toBe('Sec-Fetch-Site: "cross-site"');
    expect(crossSiteReason({ ...post, fetchSite: 'same-site' })).toBe('Sec-Fetch-Site: "same-site"');
    // Sec-Fetch-Site wins over an Origin that looks right.
    expect(
      crossSiteReason({ ...post, fetchSite: 'cross-site', origin: 'http://127.0.0.1:7100' }),
    ).not.toBeNull();
  });

  it('a top-level page load (a link to the console) passes; a frame, a fetch or a form post does not', () => {
    const link = { host, fetchSite: 'cross-site', fetchMode: 'navigate', fetchDest: 'document' };
    expect(crossSiteReason({ ...link, method: 'GET' })).toBeNull();
    expect(crossSiteReason({ ...link, method: 'HEAD' })).toBeNull();
    expect(crossSiteReason({ ...link, method: 'POST' })).not.toBeNull();
    expect(crossSiteReason({ ...link, method: 'GET', fetchDest: 'iframe' })).not.toBeNull();
    expect(
      crossSiteReason({ ...link, method: 'GET', fetchMode: 'no-cors', fetchDest: 'image' }),
    ).not.toBeNull();
  });

  it('else Origin must name the request’s Host (or one of the bridge’s own origins)', () => {
    expect(crossSiteReason({ ...post, origin: 'http://127.0.0.1:7100' })).toBeNull();
    expect(crossSiteReason({ ...post, host: 'localhost', origin: 'http://localhost' })).toBeNull();
    expect(crossSiteReason({ ...post, host: 'localhost:80', origin: 'http://localhost' })).toBeNull();
    expect(crossSiteReason({ ...post, origin: 'http://127.0.0.1:7101' })).toBe(
      'Origin: "http://127.0.0.1:7101"',
    );
    expect(crossSiteReason({ ...post, origin: 'http://localhost:7100' })).not.toBeNull();
    expect(crossSiteReason({ ...post, origin: 'null' })).toBe('Origin: "null"');
    expect(crossSiteReason({ ...post, origin: 'https://attacker.example' })).not.toBeNull();
    expect(crossSiteReason({ ...post, origin: 'http://127.0.0.1:7100/path' })).not.toBeNull();
    expect(crossSiteReason({ ...post, origin: 'http://user@127.0.0.1:7100' })).not.toBeNull();
    const proxied = { ...post, host: 'bridge1:7100', origin: 'https://devicebridge.example.com' };
    expect(crossSiteReason(proxied)).not.toBeNull();
    expect(crossSiteReason(proxied, ['https://devicebridge.example.com'])).toBeNull();
  });

  it('an Origin of another host is refused whatever it is (property)', () => {
    fc.assert(
      fc.property(fc.webUrl(), fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'), (url, method) => {
        const origin = new URL(url).origin;
        if (new URL(origin).host === host) return;
        expect(crossSiteReason({ method, host, origin })).toMatch(/^Origin: /);
      }),
    );
  });
});
