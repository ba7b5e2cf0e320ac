import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorLine, redactUrlCredentials } from '../../src/cli/error-line.ts';
import { BridgeClientError, parseBridgeUrl } from '../../src/client/index.ts';
import { ConfigError } from '../../src/config.ts';
import { assertBindAllowed, resolveBindHost } from '../../src/server/serve.ts';

const secret = fc.stringMatching(/^[A-Za-z0-9]{8,20}$/);

describe('bridge URL parser (DEVICEBRIDGE_URL, --url)', () => {
  it('accepts http(s) base URLs and drops the trailing slash', () => {
    expect(parseBridgeUrl('http://127.0.0.1:7100/')).toBe('http://127.0.0.1:7100');
    expect(parseBridgeUrl('https://bridge.example/base/')).toBe('https://bridge.example/base');
  });

  it('refuses credentials, other schemes, queries and garbage without quoting the input', () => {
    for (const raw of [
      'http://u:pw-secret@h',
      'http://u@h',
      'ftp://h',
      'http://h/?token=pw-secret',
      'pw-secret',
    ]) {
      expect(() => parseBridgeUrl(raw)).toThrow(BridgeClientError);
      try {
        parseBridgeUrl(raw);
      } catch (err) {
        expect((err as Error).message).not.toContain('pw-secret');
      }
    }
  });

  it('property: any input either parses to a credential-free http(s) URL or fails without echoing a password', () => {
    fc.assert(
      fc.property(fc.string(), secret, fc.webUrl(), (junk, password, url) => {
        for (const raw of [
          junk,
          url,
          url.replace('://', `://user:${password}@`),
          `${junk}://u:${password}@${junk}`,
        ]) {
          try {
            const parsed = new URL(parseBridgeUrl(raw));
            expect(parsed.username + parsed.password).toBe('');
            expect(['http:', 'https:']).toContain(parsed.protocol);
          } catch (err) {
            expect(err).toBeInstanceOf(BridgeClientError);
            expect((err as Error).message).not.toContain(password);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('CLI error lines', () => {
  it('property: a URL password never survives redaction, whatever surrounds it', () => {
    fc.assert(
      fc.property(fc.webUrl(), secret, fc.string(), fc.string(), (url, password, before, after) => {
        const withCreds = url.replace('://', `://someone:${password}@`);
        const line = errorLine(`${before} ${withCreds} ${after}`);
        expect(line.slice(0, 'devicebridge: '.length)).toBe('devicebridge: ');
        expect(line).not.toContain(`:${password}@`);
        expect(line).not.toMatch(/[\n\r]/);
      }),
      { numRuns: 300 },
    );
    expect(redactUrlCredentials('GET http://a:b@c/x and s3://k:s@bucket')).toBe(
      'GET http://***@c/x and s3://***@bucket',
    );
  });
});

describe('bind host decision', () => {
  const fixed =
    (addresses: string[] | Error) => async (): Promise<Array<{ address: string; family: number }>> => {
      if (addresses instanceof Error) throw addresses;
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };

  it('a name is loopback only when every address it resolves to is', async () => {
    expect(await resolveBindHost('localhost', fixed(['127.0.0.1', '::1']))).toEqual({
      address: '127.0.0.1',
      loopback: true,
    });
    const mixed = await resolveBindHost('foo.localhost', fixed(['127.0.0.1', '10.1.2.3']));
    expect(mixed.loopback).toBe(false);
    expect(() => assertBindAllowed('foo.localhost', mixed.loopback, false)).toThrow(ConfigError);
    expect(() => assertBindAllowed('foo.localhost', mixed.loopback, true)).not.toThrow();
    expect((await resolveBindHost('[::1]', fixed(new Error('not called')))).loopback).toBe(true);
    expect((await resolveBindHost('0.0.0.0', fixed(new Error('not called')))).loopback).toBe(false);
  });

  it('a name that does not resolve is a configuration error naming DEVICEBRIDGE_HOST', async () => {
    const enotfound = Object.assign(new Error('getaddrinfo ENOTFOUND foo.localhost'), { code: 'ENOTFOUND' });
    await expect(resolveBindHost('foo.localhost', fixed(enotfound))).rejects.toThrow(
      /DEVICEBRIDGE_HOST: cannot resolve "foo.localhost" \(ENOTFOUND\)/,
    );
    await expect(resolveBindHost('foo.localhost', fixed([]))).rejects.toBeInstanceOf(ConfigError);
  });
});
