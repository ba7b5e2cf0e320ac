import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FaultSpecError,
  formatFaultSpecs,
  mergeFaults,
  parseFaultSpec,
  parseFaultSpecs,
} from '../../src/simulator/faults.ts';
import type { Faults } from '../../src/simulator/types.ts';

const faultsArb: fc.Arbitrary<Faults> = fc.record(
  {
    dropAfterBytes: fc.nat({ max: 1e12 }),
    latencyMs: fc.nat({ max: 1e6 }),
    bandwidthBytesPerSec: fc.integer({ min: 1, max: 1e12 }),
    chunk: fc.record({
      action: fc.constantFrom('drop', 'duplicate', 'corrupt'),
      index: fc.nat({ max: 1e6 }),
    }),
    helperCrash: fc.constant(true),
    helperTimeout: fc.constant(true),
    installFailure: fc.stringMatching(/^[A-Z_]{1,30}$/).map((s) => `INSTALL_FAILED_${s}`),
    offlineAfterMs: fc.nat({ max: 1e9 }),
    unauthorized: fc.constant(true),
    stall: fc.constant(true),
    glassAgentDeath: fc.constant(true),
    glassA11yUnbind: fc.constant(true),
    glassMalformed: fc.constant(true),
    injectBlocked: fc.constant(true),
    a11yPolicyBlocked: fc.constant(true),
    failCommand: fc.stringMatching(/^[a-z_][a-z0-9_.+-]{0,20}$/),
    screenrecordLimitS: fc.integer({ min: 1, max: 180 }),
    screenEncoderFail: fc.constant(true),
    screenEncoderDieAfterS: fc.integer({ min: 1, max: 3600 }),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<Faults>;

describe('parseFaultSpec', () => {
  it('round-trips every fault set through its specs', () => {
    fc.assert(
      fc.property(faultsArb, (faults) => {
        expect(parseFaultSpecs(formatFaultSpecs(faults))).toEqual(faults);
      }),
    );
  });

  it('parses each documented spec', () => {
    expect(parseFaultSpec('drop-after-bytes=4096')).toEqual({ dropAfterBytes: 4096 });
    expect(parseFaultSpec('drop-after-bytes=4k')).toEqual({ dropAfterBytes: 4096 });
    expect(parseFaultSpec('latency-ms=25')).toEqual({ latencyMs: 25 });
    expect(parseFaultSpec('bandwidth=2m')).toEqual({ bandwidthBytesPerSec: 2 * 1024 * 1024 });
    expect(parseFaultSpec('bandwidth=100K')).toEqual({ bandwidthBytesPerSec: 102400 });
    expect(parseFaultSpec('chunk=corrupt:3')).toEqual({ chunk: { action: 'corrupt', index: 3 } });
    expect(parseFaultSpec('helper-crash')).toEqual({ helperCrash: true });
    expect(parseFaultSpec('helper-timeout')).toEqual({ helperTimeout: true });
    expect(parseFaultSpec('install-failure=INSTALL_FAILED_INSUFFICIENT_STORAGE')).toEqual({
      installFailure: 'INSTALL_FAILED_INSUFFICIENT_STORAGE',
    });
    expect(parseFaultSpec('offline-after-ms=500')).toEqual({ offlineAfterMs: 500 });
    expect(parseFaultSpec('unauthorized')).toEqual({ unauthorized: true });
    expect(parseFaultSpec('stall')).toEqual({ stall: true });
    expect(parseFaultSpec('glass-agent-death')).toEqual({ glassAgentDeath: true });
    expect(parseFaultSpec('glass-agent-deaf')).toEqual({ glassAgentDeaf: true });
    expect(parseFaultSpec('glass-a11y-unbind')).toEqual({ glassA11yUnbind: true });
    expect(parseFaultSpec('glass-malformed')).toEqual({ glassMalformed: true });
    expect(parseFaultSpec('inject-blocked')).toEqual({ injectBlocked: true });
    expect(parseFaultSpec('a11y-policy-blocked')).toEqual({ a11yPolicyBlocked: true });
    expect(parseFaultSpec('screen-encoder-fail')).toEqual({ screenEncoderFail: true });
    expect(parseFaultSpec('screenrecord-limit-s=3')).toEqual({ screenrecordLimitS: 3 });
    expect(() => parseFaultSpec('screenrecord-limit-s=181')).toThrow(/1 to 180/);
    expect(() => parseFaultSpec('screenrecord-limit-s=0')).toThrow(/at least 1/);
    expect(parseFaultSpec('screen-encoder-die-after-s=2')).toEqual({ screenEncoderDieAfterS: 2 });
    expect(() => parseFaultSpec('screen-encoder-die-after-s=0')).toThrow(/at least 1/);
    expect(() => parseFaultSpec('screen-encoder-die-after-s=3601')).toThrow(/1 to 3600/);
    expect(() => parseFaultSpec('glass-malformed=1')).toThrow(/glass-malformed takes no value/);
  });

  it('rejects bad specs with an error naming the spec', () => {
    const bad = [
      'nope',
      'latency-ms',
      'latency-ms=',
      'latency-ms=-1',
      'latency-ms=1.5',
      'latency-ms=5k',
      'bandwidth=0',
      'bandwidth=10g',
      'chunk=explode:1',
      'chunk=drop',
      'chunk=drop:x',
      'install-failure=FAILED',
      'install-failure=INSTALL_FAILED_lower',
      'helper-crash=yes',
      'unauthorized=1',
      'drop-after-bytes=99999999999999999',
    ];
    for (const spec of bad) {
      let error: unknown;
      try {
        parseFaultSpec(spec);
      } catch (err) {
        error = err;
      }
      expect(error, spec).toBeInstanceOf(FaultSpecError);
      expect((error as FaultSpecError).message).toContain(JSON.stringify(spec));
      expect((error as FaultSpecError).spec).toBe(spec);
    }
  });

  it('never throws anything but FaultSpecError on arbitrary input', () => {
    fc.assert(
      fc.property(fc.string(), (spec) => {
        try {
          const parsed = parseFaultSpec(spec);
          expect(typeof parsed).toBe('object');
        } catch (err) {
          expect(err).toBeInstanceOf(FaultSpecError);
        }
      }),
    );
  });
});

describe('mergeFaults', () => {
  it('lets later sets win key by key and skips undefined values', () => {
    fc.assert(
      fc.property(faultsArb, faultsArb, (a, b) => {
        const merged = mergeFaults(a, b);
        for (const key of Object.keys(b) as Array<keyof Faults>) expect(merged[key]).toEqual(b[key]);
        for (const key of Object.keys(a) as Array<keyof Faults>) {
          if (!(key in b)) expect(merged[key]).toEqual(a[key]);
        }
      }),
    );
    expect(mergeFaults({ latencyMs: 5 }, { latencyMs: undefined })).toEqual({ latencyMs: 5 });
  });
});
