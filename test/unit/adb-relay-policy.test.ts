/** The adb endpoint's service allowlist, port ranges and relayed features (pure). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { relayedFeatures } from '../../src/adb/relay-endpoints.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { BridgeError } from '../../src/errors.ts';
import {
  advertisedEndpoint,
  isRelayedService,
  MAX_SERVICE_BYTES,
  parsePortRange,
} from '../../src/protocol/adb/relay-policy.ts';

describe('isRelayedService', () => {
  it('relays what adb shell, push/pull, install and forward open', () => {
    for (const s of [
      'shell:echo hi',
      'shell,v2,TERM=xterm,raw:echo hi',
      'exec:cat /x',
      'sync:',
      'abb_exec:package\0install\0-r\0-t\0-S\x080\0',
      'tcp:8080',
      'localabstract:foo',
      'jdwp:1234',
      'track-jdwp',
    ])
      expect(isRelayedService(s), s).toBe(true);
  });

  it('refuses services that change the transport or reach beyond the lease', () => {
    for (const s of [
      '',
      'reverse:forward:tcp:1;tcp:2',
      'tcpip:5555',
      'usb:',
      'reboot:',
      'root:',
      'unroot:',
      'remount:',
      'disable-verity:',
      'backup:all',
      'restore:',
      'host:kill',
      'shell:echo\0hidden',
      'track-jdwpx',
      `shell:${'x'.repeat(MAX_SERVICE_BYTES)}`,
    ])
      expect(isRelayedService(s), s.slice(0, 40)).toBe(false);
  });

  it('property: only allowlisted prefixes pass; NUL only inside abb services', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        const ok = isRelayedService(s);
        if (ok) {
          expect(s).toMatch(
            /^(shell:|shell,|exec:|sync:|abb_exec:|abb:|tcp:|localabstract:|localreserved:|localfilesystem:|jdwp:|framebuffer:|track-jdwp$|track-app$)/,
          );
          if (s.includes('\0')) expect(s).toMatch(/^abb(_exec)?:/);
        }
        expect(isRelayedService(`reverse:${s}`)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe('parsePortRange', () => {
  it('reads 0, one port and FROM-TO; names the problem otherwise', () => {
    expect(parsePortRange('0')).toEqual({ from: 0, to: 0 });
    expect(parsePortRange('7200')).toEqual({ from: 7200, to: 7200 });
    expect(parsePortRange('7200-7299')).toEqual({ from: 7200, to: 7299 });
    expect(() => parsePortRange('7300-7200')).toThrow(/FROM ≤ TO/);
    expect(() => parsePortRange('70000')).toThrow(/65535/);
    expect(() => parsePortRange('a-b')).toThrow(/expected 0, PORT or FROM-TO/);
  });

  it('property: any text is a valid range or INVALID_ARGUMENT', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 20 }),
          fc.tuple(fc.nat(70000), fc.nat(70000)).map(([a, b]) => `${a}-${b}`),
        ),
        (text) => {
          try {
            const r = parsePortRange(text);
            expect(r.from <= r.to).toBe(true);
            expect(r.to).toBeLessThanOrEqual(65535);
            expect(r.from === 0 ? r.to === 0 : r.from >= 1).toBe(true);
          } catch (err) {
            expect(err).toBeInstanceOf(BridgeError);
            expect((err as BridgeError).code).toBe('INVALID_ARGUMENT');
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('relayedFeatures', () => {
  it("passes the device's features on, without delayed_ack (the relay acknowledges per WRTE)", () => {
    expect(relayedFeatures(['shell_v2', 'delayed_ack', 'abb_exec'])).toEqual(['shell_v2', 'abb_exec']);
  });
});

describe('advertisedEndpoint', () => {
  it('formats host:port by the one endpoint rule (IPv6 in brackets, canonical)', () => {
    expect(advertisedEndpoint('127.0.0.1', 7201)).toBe('127.0.0.1:7201');
    expect(advertisedEndpoint('Bridge.Example.com', 7201)).toBe('bridge.example.com:7201');
    expect(advertisedEndpoint('fd00:0::1', 7201)).toBe('[fd00::1]:7201');
    expect(advertisedEndpoint('[::1]', 7201)).toBe('[::1]:7201');
    expect(() => advertisedEndpoint('bad host', 7201)).toThrow(BridgeError);
  });

  it('the configuration refuses a bad advertised host or port range, naming the variable', () => {
    expect(loadConfig({ DEVICEBRIDGE_ADB_ENDPOINT_PORTS: '7200-7210' }).adbEndpointPorts).toBe('7200-7210');
    expect(() => loadConfig({ DEVICEBRIDGE_ADB_ENDPOINT_PORTS: '9-1' })).toThrow(
      /DEVICEBRIDGE_ADB_ENDPOINT_PORTS/,
    );
    expect(() => loadConfig({ DEVICEBRIDGE_ADB_ENDPOINT_ADVERTISED_HOST: 'a b' })).toThrow(ConfigError);
    expect(
      loadConfig({ DEVICEBRIDGE_ADB_ENDPOINT_ADVERTISED_HOST: 'farm.example.com' }).adbEndpointAdvertisedHost,
    ).toBe('farm.example.com');
  });
});
