import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBridgeError } from '../../src/errors.ts';
import { assembleSnapshotChunks, interpretSnapshotResult } from '../../src/protocol/helper/chunks.ts';
import { parseInstrumentationOutput } from '../../src/protocol/helper/instrumentation-output.ts';
import { chunkRecords, snapshotOutput } from '../fixtures/instrumentation/build.ts';

const dir = new URL('../fixtures/instrumentation/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, dir), 'utf8');
const corpusXml = readFileSync(
  new URL('../fixtures/uiautomator/04-autojs-error-dialog-zh.xml', import.meta.url),
  'utf8',
);
const emojiXml = readFileSync(
  new URL('../fixtures/uiautomator/15-music-home-emoji.xml', import.meta.url),
  'utf8',
);

function failure(
  result: ReturnType<typeof assembleSnapshotChunks> | ReturnType<typeof interpretSnapshotResult>,
) {
  if (result.ok) throw new Error('expected a failure');
  expect(isBridgeError(result.error)).toBe(true);
  return result.error;
}

describe('assembleSnapshotChunks', () => {
  it('joins bytes, so UTF-8 split across chunks decodes (3-byte chunks cut every CJK char)', () => {
    const result = assembleSnapshotChunks(chunkRecords(corpusXml, 3));
    expect(result).toMatchObject({ ok: true, xml: corpusXml, byteLength: Buffer.byteLength(corpusXml) });
  });

  it('property: any XML, chunk size and record order round-trips', () => {
    const xmlArb = fc
      .string({ unit: 'grapheme', maxLength: 200 })
      .map((s) => `<hierarchy rotation="0">${s}</hierarchy>`);
    fc.assert(
      fc.property(xmlArb, fc.integer({ min: 1, max: 64 }), fc.infiniteStream(fc.nat()), (xml, size, rnd) => {
        const records = chunkRecords(xml, size);
        // Fisher–Yates with the generated stream.
        const it = rnd[Symbol.iterator]();
        for (let i = records.length - 1; i > 0; i--) {
          const j = (it.next().value as number) % (i + 1);
          [records[i], records[j]] = [
            records[j] as Record<string, string>,
            records[i] as Record<string, string>,
          ];
        }
        const result = assembleSnapshotChunks(records);
        expect(result).toMatchObject({
          ok: true,
          xml,
          chunkCount: Math.max(1, Math.ceil(Buffer.byteLength(xml) / size)),
        });
      }),
      { numRuns: 200 },
    );
  });

  it('keeps only records of this protocol and format', () => {
    const records = [
      { ...(chunkRecords('<x/>')[0] as Record<string, string>), agentDeviceProtocol: 'other-v9' },
      { ...(chunkRecords('<x/>')[0] as Record<string, string>), outputFormat: 'json' },
      {
        agentDeviceProtocol: 'android-snapshot-helper-v1',
        outputFormat: 'uiautomator-xml',
        sessionReady: 'true',
      },
      ...chunkRecords(emojiXml),
    ];
    expect(assembleSnapshotChunks(records)).toMatchObject({ ok: true, xml: emojiXml });
  });

  it('no chunks', () => {
    expect(failure(assembleSnapshotChunks([])).details).toMatchObject({ reason: 'no-chunks' });
  });

  it('chunkCount mismatch names the chunk', () => {
    const records = chunkRecords(corpusXml, 1024);
    records[2] = { ...(records[2] as Record<string, string>), chunkCount: '9' };
    const error = failure(assembleSnapshotChunks(records));
    expect(error.code).toBe('HELPER_PROTOCOL_ERROR');
    expect(error.details).toMatchObject({ reason: 'chunk-count-mismatch', chunkIndex: 2, chunkCount: 9 });
    expect(error.message).toContain('chunk 2');
  });

  it('out-of-range, duplicate and missing indexes name the index', () => {
    const records = chunkRecords(corpusXml, 1024);
    const outOfRange = records.map((r, i) => (i === 1 ? { ...r, chunkIndex: '4' } : r));
    expect(failure(assembleSnapshotChunks(outOfRange)).details).toMatchObject({
      reason: 'chunk-index-out-of-range',
      chunkIndex: 4,
    });
    const duplicate = [...records, records[1] as Record<string, string>];
    expect(failure(assembleSnapshotChunks(duplicate)).details).toMatchObject({
      reason: 'duplicate-chunk',
      chunkIndex: 1,
    });
    const missing = records.filter((_, i) => i !== 2);
    const error = failure(assembleSnapshotChunks(missing));
    expect(error.details).toMatchObject({ reason: 'missing-chunk', chunkIndex: 2, chunkCount: 4 });
    expect(error.message).toContain('chunk 2');
    // Duplicate taking the place of a missing one: still named.
    const dupInsteadOfMissing = records.map((r, i) => (i === 3 ? (records[0] as Record<string, string>) : r));
    expect(failure(assembleSnapshotChunks(dupInsteadOfMissing)).details).toMatchObject({
      reason: 'duplicate-chunk',
      chunkIndex: 0,
    });
  });

  it('a hostile chunkCount does not allocate and still names the missing index', () => {
    const records = chunkRecords('<hierarchy></hierarchy>').map((r) => ({ ...r, chunkCount: '999999999' }));
    expect(failure(assembleSnapshotChunks(records)).details).toMatchObject({
      reason: 'missing-chunk',
      chunkIndex: 1,
    });
  });

  it('corrupt base64, invalid UTF-8, invalid fields and missing hierarchy', () => {
    const records = chunkRecords(corpusXml, 1024);
    const corrupt = records.map((r, i) =>
      i === 1 ? { ...r, payloadBase64: `*${(r.payloadBase64 ?? '').slice(1)}` } : r,
    );
    expect(failure(assembleSnapshotChunks(corrupt)).details).toMatchObject({
      reason: 'invalid-base64',
      chunkIndex: 1,
    });
    const bad = chunkRecords('<hierarchy></hierarchy>');
    bad[0] = {
      ...(bad[0] as Record<string, string>),
      payloadBase64: Buffer.from([0x3c, 0xff, 0xfe]).toString('base64'),
    };
    expect(failure(assembleSnapshotChunks(bad)).details).toMatchObject({ reason: 'invalid-utf8' });
    const noIndex = chunkRecords('<hierarchy></hierarchy>').map((r) => ({ ...r, chunkIndex: 'x' }));
    expect(failure(assembleSnapshotChunks(noIndex)).details).toMatchObject({
      reason: 'invalid-chunk-fields',
    });
    expect(failure(assembleSnapshotChunks(chunkRecords('<hierarchy rotation="0">'))).details).toMatchObject({
      reason: 'missing-hierarchy',
    });
  });

  it('property: never throws on arbitrary records', () => {
    const field = fc.oneof(fc.string(), fc.nat({ max: 5 }).map(String), fc.base64String());
    const recordArb = fc.record(
      {
        agentDeviceProtocol: fc.constantFrom('android-snapshot-helper-v1', 'x'),
        outputFormat: fc.constantFrom('uiautomator-xml', 'y'),
        chunkIndex: field,
        chunkCount: field,
        payloadBase64: field,
      },
      { requiredKeys: ['agentDeviceProtocol', 'outputFormat'] },
    );
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 8 }), (records) => {
        const result = assembleSnapshotChunks(records as Array<Record<string, string>>);
        if (!result.ok) expect(result.error.code).toBe('HELPER_PROTOCOL_ERROR');
      }),
      { numRuns: 300 },
    );
  });
});

describe('interpretSnapshotResult', () => {
  const interpret = (name: string) => interpretSnapshotResult(parseInstrumentationOutput(fixture(name)));

  it('snapshot: typed final fields and the XML', () => {
    const result = interpret('snapshot-ok.txt');
    if (!result.ok || result.mode !== 'snapshot') throw new Error('expected a snapshot');
    expect(result.xml).toBe(corpusXml);
    expect(result.result).toMatchObject({
      agentDeviceProtocol: 'android-snapshot-helper-v1',
      helperApiVersion: 2,
      rootPresent: true,
      captureMode: 'interactive-windows',
      nodeCount: 9,
      truncated: false,
      elapsedMs: 37,
    });
    expect(interpret('snapshot-ok-crlf.txt')).toEqual(result);
    expect(interpret('snapshot-noise.txt')).toEqual(result);
  });

  it('viewport and gesture', () => {
    expect(interpret('viewport-ok.txt')).toMatchObject({
      ok: true,
      mode: 'viewport',
      result: { kind: 'viewport', x: 0, y: 0, width: 1080, height: 2400 },
    });
    expect(interpret('gesture-ok.txt')).toMatchObject({
      ok: true,
      mode: 'gesture',
      result: { kind: 'swipe', injectedEvents: 14, elapsedMs: 312 },
    });
  });

  it('ok=false → HELPER_FAILED with errorType and message', () => {
    const error = failure(interpret('helper-error.txt'));
    expect(error.code).toBe('HELPER_FAILED');
    expect(error.details).toMatchObject({
      errorType: 'java.util.concurrent.TimeoutException',
      message: 'Timed out waiting for Android UiAutomation to connect',
    });
  });

  it('crash → retryable HELPER_FAILED "Process crashed"', () => {
    const error = failure(interpret('crash.txt'));
    expect(error.code).toBe('HELPER_FAILED');
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('Process crashed');
  });

  it('instrumentation not found → HELPER_FAILED naming the component, not retryable', () => {
    const error = failure(interpret('not-found.txt'));
    expect(error.code).toBe('HELPER_FAILED');
    expect(error.retryable).toBe(false);
    expect(error.details).toMatchObject({
      reason: 'instrumentation-not-started',
      component: 'com.callstack.agentdevice.snapshothelper/.SnapshotInstrumentation',
    });
  });

  it('no INSTRUMENTATION_CODE → HELPER_PROTOCOL_ERROR', () => {
    const error = failure(interpret('truncated.txt'));
    expect(error.code).toBe('HELPER_PROTOCOL_ERROR');
    expect(error.details).toMatchObject({ reason: 'truncated-output' });
  });

  it('a dropped chunk in an otherwise complete run names the index', () => {
    const text = snapshotOutput(corpusXml, { chunkSize: 1024, order: [0, 1, 3] });
    expect(failure(interpretSnapshotResult(parseInstrumentationOutput(text))).details).toMatchObject({
      reason: 'missing-chunk',
      chunkIndex: 2,
    });
  });

  it('INSTRUMENTATION_ABORTED → HELPER_FAILED; wrong protocol → HELPER_PROTOCOL_ERROR', () => {
    const aborted = parseInstrumentationOutput('INSTRUMENTATION_ABORTED: System has crashed.\n');
    expect(failure(interpretSnapshotResult(aborted)).code).toBe('HELPER_FAILED');
    const other = parseInstrumentationOutput('INSTRUMENTATION_RESULT: stream=\nINSTRUMENTATION_CODE: -1\n');
    expect(failure(interpretSnapshotResult(other)).details).toMatchObject({ reason: 'protocol-mismatch' });
  });

  it('property: never throws, every failure is HELPER_FAILED or HELPER_PROTOCOL_ERROR', () => {
    const base = fixture('snapshot-ok.txt');
    fc.assert(
      fc.property(fc.nat(), fc.nat({ max: 40 }), fc.string({ maxLength: 5 }), (at, del, ins) => {
        const p = at % (base.length + 1);
        const mutated = base.slice(0, p) + ins + base.slice(p + del);
        const result = interpretSnapshotResult(parseInstrumentationOutput(mutated));
        if (!result.ok) expect(['HELPER_FAILED', 'HELPER_PROTOCOL_ERROR']).toContain(result.error.code);
      }),
      { numRuns: 300 },
    );
  });
});
