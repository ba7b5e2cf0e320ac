/**
 * The doctor's pure parts: `getprop`'s listing parsed into the report's device block (outside
 * input: property-tested), and what a failed check means (each known failure and the generic path).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  diagnose,
  doctorDevice,
  FIX_A11Y_RESTRICTED,
  FIX_GENERIC,
  FIX_INJECTION,
  FIX_SCREEN_OFF,
  FIX_TEST_ONLY,
  FIX_USER_RESTRICTED,
  MAX_DETAIL,
  parseGetprop,
} from '../../src/app/doctor-diagnosis.ts';
import { BridgeError } from '../../src/errors.ts';

const key = fc.stringMatching(/^[a-z][a-z0-9._-]{0,40}$/);
const value = fc.string({ maxLength: 60 }).filter((s) => !/[\r\n]/.test(s));

describe('parseGetprop', () => {
  it('reads back every [key]: [value] line it is given (first occurrence wins), whatever the values', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(key, value), { maxLength: 30 }), fc.boolean(), (pairs, crlf) => {
        const text = pairs.map(([k, v]) => `[${k}]: [${v}]`).join(crlf ? '\r\n' : '\n');
        const parsed = parseGetprop(text);
        const expected = new Map<string, string>();
        for (const [k, v] of pairs) if (!expected.has(k)) expected.set(k, v);
        expect(parsed).toEqual(expected);
      }),
    );
  });

  it('never throws on arbitrary output, and keeps only well-formed lines', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (text) => {
        const parsed = parseGetprop(text);
        for (const [k] of parsed) expect(text).toContain(`[${k}]: [`);
      }),
    );
  });

  it('the device block: model, manufacturer, API level, release and fingerprint (null when absent or odd)', () => {
    const props = parseGetprop(
      [
        '[ro.build.fingerprint]: [Xiaomi/venus/venus:13/TKQ1/V14.0.3:user/release-keys]',
        '[ro.build.version.release]: [13]',
        '[ro.build.version.sdk]: [33]',
        '[ro.product.manufacturer]: [Xiaomi]',
        '[ro.product.model]: [M2011K2G]',
        'garbage line',
      ].join('\n'),
    );
    expect(doctorDevice(props)).toEqual({
      model: 'M2011K2G',
      manufacturer: 'Xiaomi',
      sdk: 33,
      release: '13',
      fingerprint: 'Xiaomi/venus/venus:13/TKQ1/V14.0.3:user/release-keys',
    });
    expect(doctorDevice(parseGetprop('[ro.build.version.sdk]: [thirty]\n[ro.product.model]: [ ]'))).toEqual({
      model: null,
      manufacturer: null,
      sdk: null,
      release: null,
      fingerprint: null,
    });
  });
});

describe('diagnose', () => {
  it("test-package installs refused: INSTALL_FAILED_TEST_ONLY and MIUI's INSTALL_FAILED_USER_RESTRICTED", () => {
    const testOnly = diagnose(
      'helpers-installed',
      new BridgeError(
        'HELPER_INSTALL_FAILED',
        'pm install failed: Failure [INSTALL_FAILED_TEST_ONLY: installPackageLI]',
      ),
    );
    expect(testOnly).toMatchObject({
      known: 'test-install-refused',
      fix: FIX_TEST_ONLY,
      errorCode: 'HELPER_INSTALL_FAILED',
    });
    const restricted = diagnose(
      'helpers-installed',
      new BridgeError('HELPER_INSTALL_FAILED', 'install refused', {
        details: { code: 'INSTALL_FAILED_USER_RESTRICTED' },
      }),
    );
    expect(restricted).toMatchObject({ known: 'test-install-refused', fix: FIX_USER_RESTRICTED });
    expect(restricted.fix).toContain('Install via USB');
  });

  it('injection blocked: the agent error names INJECT_EVENTS', () => {
    const f = diagnose(
      'keys',
      new BridgeError(
        'HELPER_FAILED',
        'glass agent: java.lang.SecurityException: ... INJECT_EVENTS permission.',
      ),
    );
    expect(f).toMatchObject({ known: 'injection-blocked', fix: FIX_INJECTION });
    expect(f.fix).toContain('USB debugging (Security settings)');
  });

  it('a11y restricted: only a service that never bound, on the a11y-enable check', () => {
    const neverBound = new BridgeError('COMPANION_UNSUPPORTED', 'did not come up', {
      details: { startFailure: 'never-bound' },
    });
    expect(diagnose('a11y-enable', neverBound)).toMatchObject({
      known: 'a11y-restricted',
      fix: FIX_A11Y_RESTRICTED,
    });
    expect(diagnose('glass-agent', neverBound).known).toBe('generic');
    const exited = new BridgeError('COMPANION_UNSUPPORTED', 'exited', {
      details: { startFailure: 'exited' },
    });
    expect(diagnose('a11y-enable', exited).known).toBe('generic');
  });

  it('screen off or locked: the a11y service has no active window', () => {
    const f = diagnose(
      'a11y-enable',
      new BridgeError('HELPER_FAILED', 'glass-a11y: no active window', {
        details: { deviceError: 'no active window' },
      }),
    );
    expect(f).toMatchObject({ known: 'screen-off', fix: FIX_SCREEN_OFF });
  });

  it('anything else is the generic path; details are bounded', () => {
    const f = diagnose('viewport', new Error('x'.repeat(5000)));
    expect(f).toMatchObject({ known: 'generic', fix: FIX_GENERIC, errorCode: 'INTERNAL' });
    expect(f.detail.length).toBeLessThanOrEqual(MAX_DETAIL);
    expect(diagnose('viewport', 'a string').detail).toBe('INTERNAL: a string');
  });
});
