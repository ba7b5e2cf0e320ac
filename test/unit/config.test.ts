import { describe, expect, it } from 'vitest';
import { ConfigError, isLoopbackHost, loadConfig } from '../../src/config.ts';

describe('loadConfig', () => {
  it('has embedded defaults', () => {
    const c = loadConfig({}, {});
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(7100);
    expect(c.dataDir).toMatch(/\/var$/);
    expect(c.s3Bucket).toBeUndefined();
    expect(c.maxUploadBytes).toBe(64 * 1024 * 1024);
  });

  it('flags override the environment', () => {
    const c = loadConfig({ DEVICEBRIDGE_PORT: '8000', DEVICEBRIDGE_HOST: '127.0.0.2' }, { port: '9000' });
    expect(c.port).toBe(9000);
    expect(c.host).toBe('127.0.0.2');
  });

  it('fails fast naming the bad variable or flag', () => {
    expect(() => loadConfig({ DEVICEBRIDGE_PORT: 'eighty' }, {})).toThrow(ConfigError);
    expect(() => loadConfig({ DEVICEBRIDGE_PORT: 'eighty' }, {})).toThrow(/DEVICEBRIDGE_PORT/);
    expect(() => loadConfig({}, { port: '70000' })).toThrow(/--port/);
    expect(() => loadConfig({ REDIS_URL: 'http://x' }, {})).toThrow(/REDIS_URL/);
    expect(() => loadConfig({ S3_PRESIGN_SECONDS: '60' }, {})).toThrow(
      /S3_PRESIGN_SECONDS: requires S3_BUCKET/,
    );
    expect(() => loadConfig({ LOG_LEVEL: 'loud' }, {})).toThrow(/LOG_LEVEL/);
  });

  it('recognises loopback hosts only', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(h), h).toBe(true);
    }
    for (const h of ['0.0.0.0', '10.0.0.1', '::', 'example.com', '128.0.0.1', 'localhost.example.com']) {
      expect(isLoopbackHost(h), h).toBe(false);
    }
  });
});

describe('DEVICEBRIDGE_NODE_URL', () => {
  it('takes an http(s) URL on any host (it is never put into a manifest)', () => {
    expect(loadConfig({ DEVICEBRIDGE_NODE_URL: 'http://bridge1:7100' }, {}).nodeUrl).toBe(
      'http://bridge1:7100',
    );
    expect(loadConfig({}, {}).nodeUrl).toBeUndefined();
  });

  it('refuses other schemes, credentials, a query or a fragment, naming the variable', () => {
    for (const bad of [
      'ftp://bridge1',
      'bridge1:7100',
      'http://u:p@bridge1',
      'http://b/?x=1',
      'http://b/#f',
    ]) {
      expect(() => loadConfig({ DEVICEBRIDGE_NODE_URL: bad }, {}), bad).toThrow(/DEVICEBRIDGE_NODE_URL/);
    }
  });
});
