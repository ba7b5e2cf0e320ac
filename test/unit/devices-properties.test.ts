import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateLabels, validateProvider } from '../../src/devices/labels.ts';
import {
  DEVICE_ID_PATTERN,
  deviceIdFor,
  devicePropertiesFrom,
  parseGetprop,
} from '../../src/devices/properties.ts';
import { BridgeError } from '../../src/errors.ts';
import { defaultProps } from '../../src/simulator/android/props.ts';

function getpropText(entries: Array<[string, string]>, eol = '\n'): string {
  return entries.map(([k, v]) => `[${k}]: [${v}]${eol}`).join('');
}

describe('parseGetprop', () => {
  it('parses the simulator’s full getprop output and extracts the device properties', () => {
    const text = getpropText(Object.entries(defaultProps('127.0.0.1:5555')));
    const props = parseGetprop(text);
    expect(props.get('ro.build.version.sdk')).toBe('34');
    expect(props.get('gsm.version.baseband')).toBe('');
    expect(devicePropertiesFrom(props)).toEqual({
      sdk: 34,
      release: '14',
      model: 'DeviceBridge Sim',
      manufacturer: 'DeviceBridge',
      abi: 'x86_64',
    });
  });

  it('handles CRLF, multi-line values, values with brackets and noise lines', () => {
    const text = [
      'WARNING: linker: something',
      '[ro.product.model]: [Pixel 8 [EU]]',
      '[persist.sys.motd]: [line one',
      'line two]',
      '[still part]: [of the value]',
      '[ro.build.version.sdk]: [33]',
      '[ro.product.cpu.abi]: [arm64-v8a]',
      '',
    ].join('\r\n');
    const props = parseGetprop(text);
    expect(props.get('ro.product.model')).toBe('Pixel 8 [EU]');
    expect(props.get('persist.sys.motd')).toBe('line one\nline two');
    expect(props.get('still part')).toBe('of the value');
    expect(props.get('ro.build.version.sdk')).toBe('33');
    expect(devicePropertiesFrom(props)).toEqual({ sdk: 33, model: 'Pixel 8 [EU]', abi: 'arm64-v8a' });
  });

  it('drops an unterminated last entry (truncated output)', () => {
    const props = parseGetprop('[a]: [1]\n[b]: [tru');
    expect([...props]).toEqual([['a', '1']]);
  });

  it('ignores unusable values: non-numeric sdk, blanks', () => {
    expect(
      devicePropertiesFrom(
        new Map([
          ['ro.build.version.sdk', 'UpsideDownCake'],
          ['ro.product.model', '   '],
          ['ro.product.manufacturer', ' Acme '],
        ]),
      ),
    ).toEqual({ manufacturer: 'Acme' });
  });

  it('property: formatted entries parse back exactly; any text parses without throwing', () => {
    const key = fc.string({
      unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz._0123456789'.split('')),
      minLength: 1,
    });
    const value = fc
      .string({ unit: fc.constantFrom(...'ab c[]:\n0'.split('')) })
      .filter((v) => !/(^|\n)\[[^\]\n]+\]: \[/.test(v) && !/\]\n/.test(v));
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(key, value), { selector: ([k]) => k, maxLength: 20 }),
        fc.boolean(),
        (entries, crlf) => {
          const props = parseGetprop(getpropText(entries, crlf ? '\r\n' : '\n'));
          const expected = entries.map(([k, v]) => [k, crlf ? v.replace(/\r\n/g, '\n') : v]);
          expect([...props]).toEqual(expected);
        },
      ),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'[]: \nab\r'.split('')) }), (text) => {
        parseGetprop(text);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('deviceIdFor', () => {
  it.each([
    ['127.0.0.1:5555', '127.0.0.1-5555'],
    ['[fd00::1]:5555', 'fd00--1-5555'],
    ['Tunnel.Example:7000', 'tunnel.example-7000'],
    ['emulator-5554', 'emulator-5554'],
    ['R58M12ABCDE', 'R58M12ABCDE'],
    ['adb-R58M-x._adb-tls-connect._tcp', 'adb-R58M-x._adb-tls-connect._tcp'],
  ])('%s → %s', (serial, id) => {
    expect(deviceIdFor(serial)).toBe(id);
    expect(deviceIdFor(serial)).toBe(deviceIdFor(serial));
  });

  it.each(['', '../etc', 'a/b', 'a b', 'a?b', 'a%2f', '.hidden', '-x', 'x'.repeat(129), 'a..b', 'é'])(
    'refuses %j',
    (serial) => {
      expect(() => deviceIdFor(serial)).toThrow(BridgeError);
    },
  );

  it('property: an id is always URL-safe, or the input is refused with a BridgeError', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom(...'aZ09.:-_[]/%'.split('')) })),
        (s) => {
          try {
            const id = deviceIdFor(s);
            expect(id).toMatch(DEVICE_ID_PATTERN);
            expect(encodeURIComponent(id)).toBe(id);
            expect(id).not.toContain('..');
          } catch (err) {
            expect(err).toBeInstanceOf(BridgeError);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('labels, provider, selector', () => {
  it('accepts valid labels and returns a fresh object', () => {
    const input = { pool: 'ci', 'team/owner': 'qa-1.x', sdk_34: 'yes' };
    const out = validateLabels(input);
    expect(out).toEqual(input);
    expect(out).not.toBe(input);
    expect(validateLabels(undefined)).toEqual({});
  });

  it('refuses bad labels, naming each field', () => {
    const cases: Array<[unknown, string]> = [
      [{ 'bad key': 'x' }, 'labels.bad key'],
      [{ k: '' }, 'labels.k'],
      [{ k: 5 }, 'labels.k'],
      [{ k: 'a'.repeat(64) }, 'labels.k'],
      [Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])), 'at most 16 labels'],
      [['a'], 'must be an object'],
      ['pool=ci', 'must be an object'],
    ];
    for (const [input, text] of cases) {
      let error: unknown;
      try {
        validateLabels(input);
      } catch (err) {
        error = err;
      }
      expect(error, JSON.stringify(input)).toBeInstanceOf(BridgeError);
      expect((error as BridgeError).code).toBe('INVALID_ARGUMENT');
      expect((error as BridgeError).message).toContain(text);
    }
  });

  it('does not let __proto__ pollute', () => {
    const out = validateLabels(JSON.parse('{"__proto__":"x","a":"b"}'));
    expect(Object.keys(out)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('property: accepted labels always satisfy the rule; everything else is INVALID_ARGUMENT', () => {
    const token = fc.oneof(
      fc.string({ maxLength: 70 }),
      fc.string({ unit: fc.constantFrom(...'aZ9._/- '.split('')), maxLength: 70 }),
    );
    fc.assert(
      fc.property(
        fc.dictionary(token, fc.oneof(token, fc.integer(), fc.constant(null)), { maxKeys: 20 }),
        (input) => {
          try {
            const out = validateLabels(input);
            expect(Object.keys(out).length).toBeLessThanOrEqual(16);
            for (const [k, v] of Object.entries(out)) {
              expect(k).toMatch(/^[A-Za-z0-9._/-]{1,63}$/);
              expect(v).toMatch(/^[A-Za-z0-9._/-]{1,63}$/);
            }
          } catch (err) {
            expect((err as BridgeError).code).toBe('INVALID_ARGUMENT');
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('provider validation (the selector is tested in leases-selector.test.ts)', () => {
    expect(validateProvider('acme-farm')).toBe('acme-farm');
    expect(validateProvider(undefined)).toBeUndefined();
    expect(() => validateProvider('a b')).toThrow(/provider/);
    expect(() => validateProvider(7)).toThrow(BridgeError);
  });
});
