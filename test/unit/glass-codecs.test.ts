/**
 * The glass codecs the simulator (and the bridge, to validate before sending) use: key chords with
 * Android KeyEvent codes, pointer gestures, and the request line parser. Expected values come from
 * seed 001 and Android's KeyEvent reference, not from the code under test.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parseA11ySettingsRecord,
  withComponent,
  withoutComponent,
} from '../../src/helpers/glass/a11y-driver.ts';
import {
  KeyChordError,
  META_CTRL_ON,
  META_SHIFT_ON,
  parseKeyChord,
} from '../../src/protocol/helper/key-chord.ts';
import { parseGesture } from '../../src/simulator/glass/agent.ts';
import { GlassRequestError, parseGlassRequest } from '../../src/simulator/glass/line-protocol.ts';

describe('parseKeyChord', () => {
  it('reads the glass protocol examples with KeyEvent codes', () => {
    expect(parseKeyChord('ctrl+a')).toEqual({
      keyCode: 29,
      metaState: META_CTRL_ON,
      modifierKeyCodes: [113],
    });
    expect(parseKeyChord('shift+tab')).toEqual({
      keyCode: 61,
      metaState: META_SHIFT_ON,
      modifierKeyCodes: [59],
    });
    expect(parseKeyChord('enter')).toEqual({ keyCode: 66, metaState: 0, modifierKeyCodes: [] });
    expect(parseKeyChord('f5')).toEqual({ keyCode: 135, metaState: 0, modifierKeyCodes: [] });
    expect(parseKeyChord(' Ctrl+Shift+Z ').keyCode).toBe(54);
  });

  it('names the unknown or repeated part', () => {
    expect(() => parseKeyChord('hyper+x')).toThrow('unknown modifier "hyper" in key chord "hyper+x"');
    expect(() => parseKeyChord('ctrl+control+x')).toThrow('modifier "control" repeated in key chord');
    expect(() => parseKeyChord('ctrl+')).toThrow('unknown key "" in key chord "ctrl+"');
    expect(() => parseKeyChord('  ')).toThrow('empty key chord');
  });

  it('property: any string either parses to a known key or throws KeyChordError', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        try {
          const chord = parseKeyChord(s);
          expect(chord.keyCode).toBeGreaterThan(0);
          expect(chord.modifierKeyCodes.length).toBe(s.split('+').length - 1);
        } catch (err) {
          expect(err).toBeInstanceOf(KeyChordError);
        }
      }),
    );
  });
});

describe('parseGesture', () => {
  it('reads {x,y,t_ms} samples and refuses decreasing times', () => {
    expect(
      parseGesture([
        { x: 1, y: 2.5, t_ms: 0 },
        { x: 3, y: 4, t_ms: 16 },
      ]),
    ).toEqual([
      { x: 1, y: 2.5, tMs: 0 },
      { x: 3, y: 4, tMs: 16 },
    ]);
    expect(() =>
      parseGesture([
        { x: 1, y: 1, t_ms: 10 },
        { x: 1, y: 1, t_ms: 5 },
      ]),
    ).toThrow('gesture[1].t_ms must not decrease (5 after 10)');
    expect(() => parseGesture([])).toThrow('gesture must be a non-empty array of {x,y,t_ms}');
  });

  it('property: arbitrary JSON is accepted with non-decreasing times or refused with GlassRequestError', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        try {
          const samples = parseGesture(value);
          for (let i = 1; i < samples.length; i++)
            expect(samples[i]!.tMs).toBeGreaterThanOrEqual(samples[i - 1]!.tMs);
        } catch (err) {
          expect(err).toBeInstanceOf(GlassRequestError);
        }
      }),
    );
  });
});

describe('parseGlassRequest', () => {
  it('wants one strict JSON object with a safe integer id and nothing but whitespace after it', () => {
    expect(parseGlassRequest('{"id":3,"op":"ping"}')).toEqual({ id: 3, request: { id: 3, op: 'ping' } });
    expect(parseGlassRequest(' {"id":1e0}')?.id).toBe(1);
    expect(parseGlassRequest('{"id":3} ')?.id).toBe(3);
    for (const bad of [
      '{"id":3} x',
      '{id:3}',
      '{"id":3,"id":3}',
      '[1]',
      '{"id":"3"}',
      '{"id":2.5}',
      '{"id":9007199254740992}',
      '{"id":1,"x":1e400}',
    ]) {
      expect(parseGlassRequest(bad), bad).toBeNull();
    }
  });

  it('property: never throws; any id it returns is a safe integer', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        (line) => {
          const parsed = parseGlassRequest(line);
          if (parsed !== null) expect(Number.isSafeInteger(parsed.id)).toBe(true);
        },
      ),
    );
  });
});

describe('the enabled-services list (device output)', () => {
  const component = fc
    .tuple(
      fc.stringMatching(/^[a-z][a-z0-9]{0,5}(\.[a-z][a-z0-9]{0,5}){1,2}$/),
      fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,8}$/),
    )
    .map(([pkg, cls]) => `${pkg}/.${cls}`);
  const list = fc.array(fc.oneof(component, fc.constant('')), { maxLength: 5 }).map((xs) => xs.join(':'));

  it('property: adding is idempotent and keeps the others; removing takes out exactly that component', () => {
    fc.assert(
      fc.property(fc.option(list, { nil: null }), component, (prior, c) => {
        const added = withComponent(prior, c);
        expect(withComponent(added, c)).toBe(added);
        expect(added.split(':').filter((e) => e === c)).toHaveLength(1);
        const others = (prior ?? '').split(':').filter((e) => e !== '' && e !== c);
        expect(
          withoutComponent(added, c)
            .split(':')
            .filter((e) => e !== ''),
        ).toEqual(others);
      }),
    );
  });
});

describe('parseA11ySettingsRecord (a record read back from the lease store)', () => {
  it('keeps a well-formed record and refuses anything else', () => {
    const ok = { serial: 's1', enabled_accessibility_services: null, accessibility_enabled: '0' };
    expect(parseA11ySettingsRecord(ok)).toEqual(ok);
    expect(parseA11ySettingsRecord({ ...ok, serial: '' })).toBeNull();
    expect(parseA11ySettingsRecord({ ...ok, accessibility_enabled: 1 })).toBeNull();
    expect(parseA11ySettingsRecord([ok])).toBeNull();
  });

  it('property: never throws; what it keeps has the record shape', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const record = parseA11ySettingsRecord(value);
        if (record !== null) {
          expect(typeof record.serial).toBe('string');
          expect(Object.keys(record).sort()).toEqual([
            'accessibility_enabled',
            'enabled_accessibility_services',
            'serial',
          ]);
        }
      }),
    );
  });
});
