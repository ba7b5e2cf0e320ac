import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InstrumentationOutputParser,
  parseInstrumentationOutput,
} from '../../src/protocol/helper/instrumentation-output.ts';
import { chunkRecords } from '../fixtures/instrumentation/build.ts';

const dir = new URL('../fixtures/instrumentation/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, dir), 'utf8');

function incremental(pieces: Array<string | Uint8Array>) {
  const parser = new InstrumentationOutputParser();
  for (const piece of pieces) parser.push(piece);
  return parser.end();
}

/** Cut `text` at the given (sorted, deduplicated) offsets. */
function cut(text: string, offsets: number[]): string[] {
  const points = [...new Set(offsets.map((o) => o % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let last = 0;
  for (const p of points) {
    out.push(text.slice(last, p));
    last = p;
  }
  out.push(text.slice(last));
  return out;
}

const lineArb = fc.oneof(
  fc.string(),
  fc
    .tuple(fc.constantFrom('INSTRUMENTATION_STATUS: ', 'INSTRUMENTATION_RESULT: '), fc.string(), fc.string())
    .map(([p, k, v]) => `${p}${k}=${v}`),
  fc.constantFrom(
    'INSTRUMENTATION_STATUS_CODE: 1',
    'INSTRUMENTATION_STATUS_CODE: -1',
    'INSTRUMENTATION_CODE: -1',
    'INSTRUMENTATION_CODE: 0',
    'INSTRUMENTATION_FAILED: a/.B',
    'INSTRUMENTATION_ABORTED: System has crashed.',
    'INSTRUMENTATION_RESULT: shortMsg=Process crashed.',
    '',
  ),
);
const outputArb = fc.array(lineArb, { maxLength: 30 }).map((lines) => lines.join('\n'));

describe('parseInstrumentationOutput on fixtures', () => {
  it('parses a multi-chunk snapshot run: records, codes and final fields', () => {
    const out = parseInstrumentationOutput(fixture('snapshot-ok.txt'));
    expect(out.statuses).toHaveLength(4);
    expect(out.statuses.map((s) => s.code)).toEqual([1, 1, 1, 1]);
    expect(out.statuses.map((s) => s.fields['chunkIndex'])).toEqual(['0', '1', '2', '3']);
    expect(out.statuses[0]?.fields['agentDeviceProtocol']).toBe('android-snapshot-helper-v1');
    expect(out.result['ok']).toBe('true');
    expect(out.result['nodeCount']).toBe('9');
    expect(out.code).toBe(-1);
    expect(out.failed).toBeNull();
    expect(out.pendingStatus).toBeNull();
  });

  it('CRLF output parses exactly like LF output', () => {
    expect(parseInstrumentationOutput(fixture('snapshot-ok-crlf.txt'))).toEqual(
      parseInstrumentationOutput(fixture('snapshot-ok.txt')),
    );
  });

  it('keeps noise out of records and records it for diagnostics', () => {
    const out = parseInstrumentationOutput(fixture('snapshot-noise.txt'));
    expect(out.statuses.map((s) => s.fields['chunkIndex'])).toEqual(['2', '0', '3', '1']);
    expect(out.noise).toEqual(['WARNING: linker: app_process has text relocations.', 'Time: 0.412']);
    expect(out.code).toBe(-1);
  });

  it('records INSTRUMENTATION_FAILED printed inside an exception line and the Error status', () => {
    const out = parseInstrumentationOutput(fixture('not-found.txt'));
    expect(out.failed).toBe('com.callstack.agentdevice.snapshothelper/.SnapshotInstrumentation');
    expect(out.statuses[0]?.code).toBe(-1);
    expect(out.statuses[0]?.fields['Error']).toMatch(
      /^Unable to find instrumentation info for: ComponentInfo\{/,
    );
    expect(out.code).toBeNull();
  });

  it('reports a crash result and a cut-off output', () => {
    const crash = parseInstrumentationOutput(fixture('crash.txt'));
    expect(crash.result['shortMsg']).toBe('Process crashed.');
    expect(crash.code).toBe(0);
    const cutOff = parseInstrumentationOutput(fixture('truncated.txt'));
    expect(cutOff.code).toBeNull();
    expect(Object.keys(cutOff.result)).toEqual([]);
  });

  it('joins continuation lines with \\n, splits on the first =, and any key order', () => {
    const out = parseInstrumentationOutput(
      [
        'INSTRUMENTATION_STATUS: stack=java.lang.RuntimeException: boom',
        '\tat a.B.c(B.java:1)',
        '',
        '\tat d.E.f(E.java:2)',
        'INSTRUMENTATION_STATUS: expr=a=b=c',
        'INSTRUMENTATION_STATUS_CODE: -2',
        'INSTRUMENTATION_RESULT: message=line one',
        'line two',
        'INSTRUMENTATION_RESULT: ok=false',
        'INSTRUMENTATION_CODE: 1',
        'trailing noise',
      ].join('\n'),
    );
    expect(out.statuses[0]?.fields).toEqual({
      stack: 'java.lang.RuntimeException: boom\n\tat a.B.c(B.java:1)\n\n\tat d.E.f(E.java:2)',
      expr: 'a=b=c',
    });
    expect(out.statuses[0]?.code).toBe(-2);
    expect(out.result['message']).toBe('line one\nline two');
    expect(out.result['ok']).toBe('false');
    expect(out.noise).toEqual(['trailing noise']);
  });

  it('records INSTRUMENTATION_ABORTED and an open status record', () => {
    const out = parseInstrumentationOutput(
      'INSTRUMENTATION_STATUS: a=1\nINSTRUMENTATION_ABORTED: System has crashed.\nINSTRUMENTATION_STATUS: b=2',
    );
    expect(out.aborted).toBe('System has crashed.');
    expect(out.pendingStatus).toEqual({ a: '1', b: '2' });
    expect(out.statuses).toEqual([]);
  });

  it('is safe with keys like __proto__', () => {
    const out = parseInstrumentationOutput('INSTRUMENTATION_RESULT: __proto__=x\nINSTRUMENTATION_CODE: 0\n');
    expect(Object.keys(out.result)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(out.result, '__proto__')?.value).toBe('x');
  });
});

describe('InstrumentationOutputParser (incremental)', () => {
  it('emits each status record as soon as its status code line arrives', () => {
    const seen: string[] = [];
    const parser = new InstrumentationOutputParser({
      onStatus: (s) => seen.push(s.fields['sessionReady'] ?? ''),
    });
    expect(parser.push('INSTRUMENTATION_STATUS: sessionReady=true\nINSTRUMENTATION_STATUS_CO')).toEqual([]);
    expect(seen).toEqual([]);
    const emitted = parser.push('DE: 2\n');
    expect(emitted).toHaveLength(1);
    expect(emitted[0]?.code).toBe(2);
    expect(seen).toEqual(['true']);
  });

  it('decodes UTF-8 split inside a multi-byte sequence across byte chunks', () => {
    const bytes = Buffer.from('INSTRUMENTATION_RESULT: message=超时 😀\nINSTRUMENTATION_CODE: 1\n');
    const pieces = Array.from(bytes, (b) => Uint8Array.of(b));
    expect(incremental(pieces).result['message']).toBe('超时 😀');
  });

  it('property: any split of any output, as strings or bytes, equals the one-shot parse', () => {
    fc.assert(
      fc.property(outputArb, fc.array(fc.nat(), { maxLength: 8 }), fc.boolean(), (text, offsets, asBytes) => {
        const oneShot = parseInstrumentationOutput(text);
        if (asBytes) {
          const bytes = Buffer.from(text);
          const points = [...new Set(offsets.map((o) => o % (bytes.length + 1)))].sort((a, b) => a - b);
          const pieces: Uint8Array[] = [];
          let last = 0;
          for (const p of points) {
            pieces.push(bytes.subarray(last, p));
            last = p;
          }
          pieces.push(bytes.subarray(last));
          // Bytes are decoded as UTF-8: compare with the one-shot parse of the same decoding.
          expect(incremental(pieces)).toEqual(parseInstrumentationOutput(bytes.toString('utf8')));
        } else {
          expect(incremental(cut(text, offsets))).toEqual(oneShot);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('property: real snapshot output split anywhere parses like the one-shot parse', () => {
    const text = fixture('snapshot-noise.txt');
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 20 }), (offsets) => {
        expect(incremental(cut(text, offsets))).toEqual(parseInstrumentationOutput(text));
      }),
      { numRuns: 100 },
    );
  });
});

describe('parser properties', () => {
  it('never throws on arbitrary strings, and always returns the full shape', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), outputArb), (text) => {
        const out = parseInstrumentationOutput(text);
        expect(Array.isArray(out.statuses)).toBe(true);
        expect(out.code === null || Number.isInteger(out.code)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('CRLF ≡ LF for any output without carriage returns', () => {
    fc.assert(
      fc.property(outputArb, (text) => {
        const lf = text.replace(/\r/g, '');
        expect(parseInstrumentationOutput(lf.replace(/\n/g, '\r\n'))).toEqual(parseInstrumentationOutput(lf));
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips generated status records (values without newlines, keys without =)', () => {
    const key = fc.string({ minLength: 1 }).filter((k) => !/[=\n\r]/.test(k) && k.trim() === k);
    const value = fc.string().filter((v) => !/[\n\r]/.test(v));
    fc.assert(
      fc.property(fc.array(fc.dictionary(key, value), { maxLength: 5 }), (records) => {
        const text = records
          .map((r) =>
            [
              ...Object.entries(r).map(([k, v]) => `INSTRUMENTATION_STATUS: ${k}=${v}`),
              'INSTRUMENTATION_STATUS_CODE: 1',
            ].join('\n'),
          )
          .join('\n');
        const out = parseInstrumentationOutput(`${text}\nINSTRUMENTATION_CODE: -1\n`);
        expect(out.statuses.map((s) => ({ ...s.fields }))).toEqual(records.map((r) => ({ ...r })));
      }),
      { numRuns: 200 },
    );
  });

  it('parses the real chunk record layout of the helper', () => {
    const records = chunkRecords('<hierarchy rotation="0"></hierarchy>');
    const text = records
      .map(
        (r) =>
          `${Object.entries(r)
            .map(([k, v]) => `INSTRUMENTATION_STATUS: ${k}=${v}`)
            .join('\n')}\nINSTRUMENTATION_STATUS_CODE: 1`,
      )
      .join('\n');
    expect(parseInstrumentationOutput(text).statuses.map((s) => ({ ...s.fields }))).toEqual(records);
  });
});

describe('parser cost on hostile output', () => {
  /**
   * Characters the parse's string searches (`indexOf`, the parser's one way to look ahead) pass
   * over: a deterministic measure of its work, where timing would depend on the machine's load.
   */
  function scanned(text: string): number {
    const original = String.prototype.indexOf;
    let total = 0;
    String.prototype.indexOf = function (this: string, search: string, from?: number) {
      const start = Math.max(0, Math.min(from ?? 0, this.length));
      const at = original.call(this, search, from);
      total += (at === -1 ? this.length : at) - start;
      return at;
    };
    try {
      parseInstrumentationOutput(text);
    } finally {
      String.prototype.indexOf = original;
    }
    return total;
  }

  for (const [name, line] of [
    ["status lines without '='", 'INSTRUMENTATION_STATUS: agentDeviceProtocol\n'],
    ['noise lines (no INSTRUMENTATION_FAILED anywhere)', 'some noise printed by the device\n'],
    ["result lines without '='", 'INSTRUMENTATION_RESULT: shortMsg\n'],
  ] as const) {
    it(`${name} cost linear time`, () => {
      const text = line.repeat(64_000);
      const work = scanned(text);
      // Linear: each line's searches stop at its end (a few passes over the text at most).
      // Searching each line's '=' or FAILED to the end of the text was quadratic: ~32,000 passes.
      expect(work, `${work} characters scanned for ${text.length}`).toBeGreaterThan(0);
      expect(work / text.length).toBeLessThan(4);
    });
  }
});
