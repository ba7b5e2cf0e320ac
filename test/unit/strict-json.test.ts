import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { DEFAULT_JSON_LIMITS, PROTOTYPE_KEYS, parseStrictJson, renderPath } from '../../src/strict-json.ts';

/** The BridgeError a call throws (fails the test when it does not throw one). */
function refusal(run: () => unknown): BridgeError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(BridgeError);
    return err as BridgeError;
  }
  throw new Error('expected a refusal');
}

function hasPrototypeKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasPrototypeKey);
  if (value !== null && typeof value === 'object') {
    return Object.keys(value).some((k) => PROTOTYPE_KEYS.has(k) || hasPrototypeKey((value as never)[k]));
  }
  return false;
}

describe('parseStrictJson: JSON.parse semantics for ordinary documents', () => {
  it('parses every JSON value like JSON.parse (property)', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ depthSize: 'medium' }).filter((v) => !hasPrototypeKey(v)),
        fc.constantFrom(undefined, 2, '\t'),
        (value, indent) => {
          const text = JSON.stringify(value, null, indent);
          expect(parseStrictJson(text, { maxDepth: 1000, maxBytes: 1e9 })).toStrictEqual(JSON.parse(text));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('accepts exactly what JSON.parse accepts, for arbitrary and mutated text (property)', () => {
    const mutated = fc
      .tuple(
        fc.json(),
        fc.nat(),
        fc.constantFrom('', ',', '{', '}', '[', ']', '"', ':', '\\', '-', '0', ' ', '\u0001'),
      )
      .map(
        ([json, at, insert]) =>
          json.slice(0, at % (json.length + 1)) + insert + json.slice(at % (json.length + 1)),
      );
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), mutated), (text) => {
        let expected: { ok: true; value: unknown } | { ok: false };
        try {
          expected = { ok: true, value: JSON.parse(text) };
        } catch {
          expected = { ok: false };
        }
        let actual: { ok: true; value: unknown } | { ok: false; err: unknown };
        try {
          actual = { ok: true, value: parseStrictJson(text, { maxDepth: 1000 }) };
        } catch (err) {
          actual = { ok: false, err };
        }
        if (actual.ok) {
          expect(expected.ok).toBe(true);
          expect(actual.value).toStrictEqual((expected as { value: unknown }).value);
        } else {
          expect(actual.err).toBeInstanceOf(BridgeError);
          expect((actual.err as BridgeError).code).toBe('INVALID_ARGUMENT');
          // Refusing what JSON.parse accepts is only allowed for the added rules.
          if (expected.ok) {
            const { message } = actual.err as BridgeError;
            const rule = (actual.err as BridgeError).details?.['rule'];
            // A number JSON.parse reads as Infinity is out of range.
            if (!message.includes('number out of range')) {
              expect(['duplicate-key', 'prototype-key']).toContain(rule);
            } else expect(JSON.stringify(expected.value)).toContain('null');
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('decodes UTF-8 bytes and refuses invalid UTF-8', () => {
    expect(parseStrictJson(Buffer.from('{"name":"снимок 📸"}'))).toEqual({ name: 'снимок 📸' });
    const err = refusal(() => parseStrictJson(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d])));
    expect(err.details?.['rule']).toBe('encoding');
  });
});

describe('parseStrictJson: the added rules', () => {
  it('refuses a duplicate key and names it, with line, column and path', () => {
    const text = '{\n  "a": {\n    "sha256": "x",\n    "sha256": "y"\n  }\n}';
    const err = refusal(() => parseStrictJson(text));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toBe('JSON: duplicate key "sha256" at line 4, column 5 (path $.a.sha256)');
    expect(err.details).toMatchObject({ rule: 'duplicate-key', line: 4, column: 5 });
    expect(err.details?.['errors']).toEqual([{ path: '$.a.sha256', message: 'duplicate key "sha256"' }]);
  });

  it('refuses __proto__, constructor and prototype keys at any depth', () => {
    for (const key of PROTOTYPE_KEYS) {
      const text = `{"manifest":[{"ok":1},{"${key}":{"installArgs":["install","--user","0"]}}]}`;
      const err = refusal(() => parseStrictJson(text));
      expect(err.details?.['rule']).toBe('prototype-key');
      expect(err.message).toContain(`the key "${key}" is not allowed`);
      expect(err.message).toContain(`(path $.manifest[1].${key})`);
    }
    // An escaped spelling is the same key.
    expect(refusal(() => parseStrictJson('{"\\u005f_proto__":{}}')).details?.['rule']).toBe('prototype-key');
  });

  it('refuses nesting past maxDepth before walking it (5,000 brackets, 10 KB)', () => {
    const text = `{"x":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const err = refusal(() => parseStrictJson(text));
    expect(err.details).toMatchObject({ rule: 'depth', limit: DEFAULT_JSON_LIMITS.maxDepth });
    expect(err.message).toContain(`nesting deeper than ${DEFAULT_JSON_LIMITS.maxDepth} levels`);
    // Exactly maxDepth levels is fine, one more is not.
    expect(parseStrictJson(`${'['.repeat(3)}${']'.repeat(3)}`, { maxDepth: 3 })).toEqual([[[]]]);
    expect(
      refusal(() => parseStrictJson(`${'['.repeat(4)}${']'.repeat(4)}`, { maxDepth: 3 })).details?.['rule'],
    ).toBe('depth');
  });

  it('refuses input over maxBytes (counted in UTF-8 bytes) before scanning it', () => {
    const err = refusal(() => parseStrictJson(`"${'é'.repeat(6)}"`, { maxBytes: 13 }));
    expect(err.details).toMatchObject({ rule: 'size', limit: 13 });
    expect(err.message).toBe('JSON: the document is 14 bytes, over the limit of 13 bytes');
    expect(parseStrictJson(`"${'é'.repeat(6)}"`, { maxBytes: 14 })).toBe('éééééé');
    expect(refusal(() => parseStrictJson(Buffer.alloc(20, 0x20), { maxBytes: 19 })).details?.['rule']).toBe(
      'size',
    );
  });

  it('never echoes input values in its messages (safe for secret files)', () => {
    const secret = 'tok_3f9a0c7e5b1d';
    fc.assert(
      fc.property(fc.nat(60), fc.constantFrom('', ',', '}', '"', '\u0001', 'x'), (cut, tail) => {
        const text = `{"tokens":[{"hash":"${secret}","role":"admin"}]}`.slice(0, cut + 10) + tail;
        try {
          parseStrictJson(text);
        } catch (err) {
          expect((err as Error).message).not.toContain('tok_');
          expect(JSON.stringify((err as BridgeError).details)).not.toContain('tok_');
        }
      }),
    );
  });

  it('reports line and column of syntax errors', () => {
    const err = refusal(() => parseStrictJson('{\n  "a": 1,\n  "b": tru\n}'));
    expect(err.details).toMatchObject({ rule: 'syntax', line: 3, column: 8 });
    expect(err.message).toContain('(path $.b)');
  });

  it('renders paths with unusual keys escaped', () => {
    expect(renderPath(['a', 0, 'x y', 'é\n'])).toBe('$.a[0]["x y"]["\\u00e9\\n"]');
  });
});

describe('parseStrictJson: the cases the on-device parser (StrictJson.java) runs too', () => {
  const { cases } = JSON.parse(
    readFileSync(new URL('../fixtures/strict-json/cases.json', import.meta.url), 'utf8'),
  ) as { cases: Array<{ json: string; value?: unknown; error?: string; rule?: string }> };

  it.each(cases.map((c) => [c.json.slice(0, 60), c] as const))('%j', (_, c) => {
    if (c.error === undefined) {
      // As text: key order counts, and -0 reads as 0 (as the Java side's integers do).
      expect(JSON.stringify(parseStrictJson(c.json))).toBe(JSON.stringify(c.value));
      return;
    }
    let caught: unknown;
    try {
      parseStrictJson(c.json);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(BridgeError);
    expect((caught as BridgeError).message).toBe(c.error);
    expect((caught as BridgeError).details?.['rule']).toBe(c.rule);
  });

  it('a number past a double is refused, never read as Infinity', () => {
    fc.assert(
      fc.property(fc.integer({ min: 309, max: 100_000 }), fc.boolean(), (exp, negative) => {
        expect(() => parseStrictJson(`[${negative ? '-' : ''}1e${exp}]`)).toThrow(/number out of range/);
      }),
    );
  });
});
