import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { buildSessionRequest, parseSessionResponse } from '../../src/protocol/helper/session-frames.ts';

const xml = readFileSync(
  new URL('../fixtures/uiautomator/14-model-picker-ar-rtl.xml', import.meta.url),
  'utf8',
);
const BASE = {
  agentDeviceProtocol: 'android-snapshot-helper-v1',
  helperApiVersion: '2',
  outputFormat: 'uiautomator-xml',
};

/** A response as SnapshotInstrumentation.writeSessionResponse writes it. */
function response(headers: Record<string, string>, body = '', eol = '\n'): Uint8Array {
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}=${v}${eol}`)
    .join('');
  return Buffer.concat([Buffer.from(`${head}${eol}`), Buffer.from(body)]);
}

const snapshotHeaders = (requestId: string, body: string) => ({
  ...BASE,
  requestId,
  ok: 'true',
  rootPresent: 'true',
  captureMode: 'interactive-windows',
  windowCount: '1',
  nodeCount: '84',
  truncated: 'false',
  elapsedMs: '12',
  byteLength: String(Buffer.byteLength(body)),
});

describe('buildSessionRequest', () => {
  it('builds one line per command', () => {
    expect(buildSessionRequest('snapshot', 'r-1')).toBe('snapshot r-1\n');
    expect(buildSessionRequest('viewport', 'a.B_9')).toBe('viewport a.B_9\n');
    expect(buildSessionRequest('quit', 'q')).toBe('quit q\n');
    expect(buildSessionRequest('gesture', 'g1', 'eyJ4IjoxfQ==')).toBe('gesture g1 eyJ4IjoxfQ==\n');
  });

  it('refuses bad request ids, payloads and commands', () => {
    for (const id of ['', 'a b', 'a\nb', 'x'.repeat(65), 'ä', 'a/b']) {
      expect(() => buildSessionRequest('snapshot', id)).toThrow(BridgeError);
    }
    for (const payload of [undefined, '', 'abc', 'ab=c', 'YWJj\n', 'YW Jj', 'YWJj====']) {
      expect(() => buildSessionRequest('gesture', 'g', payload)).toThrow(/base64/);
    }
    expect(() => buildSessionRequest('snapshot', 'r', 'YWJj')).toThrow(/no payload/);
    expect(() => buildSessionRequest('reboot' as 'quit', 'r')).toThrow(/unknown session command/);
  });

  it('property: valid ids and base64 payloads always build one parseable line', () => {
    const idArb = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/);
    fc.assert(
      fc.property(idArb, fc.uint8Array({ minLength: 1, maxLength: 64 }), (id, bytes) => {
        const payload = Buffer.from(bytes).toString('base64');
        const line = buildSessionRequest('gesture', id, payload);
        expect(line.endsWith('\n')).toBe(true);
        expect(line.trim().split(/\s+/)).toEqual(['gesture', id, payload]);
      }),
    );
  });
});

describe('parseSessionResponse', () => {
  it('snapshot: headers, XML body (RTL), byteLength checked', () => {
    const result = parseSessionResponse(response(snapshotHeaders('s1', xml), xml), {
      requestId: 's1',
      command: 'snapshot',
    });
    if (!result.ok || result.command !== 'snapshot') throw new Error(JSON.stringify(result));
    expect(result.xml).toBe(xml);
    expect(result.byteLength).toBe(Buffer.byteLength(xml));
    expect(result.result).toMatchObject({
      nodeCount: 84,
      rootPresent: true,
      byteLength: Buffer.byteLength(xml),
    });
  });

  it('accepts CRLF headers', () => {
    const result = parseSessionResponse(response(snapshotHeaders('s1', xml), xml, '\r\n'), {
      requestId: 's1',
      command: 'snapshot',
    });
    expect(result).toMatchObject({ ok: true, xml });
  });

  it('viewport and gesture are headers-only with typed fields', () => {
    const viewport = response({
      ...BASE,
      requestId: 'v',
      ok: 'true',
      kind: 'viewport',
      x: '0',
      y: '24',
      width: '1080',
      height: '2376',
    });
    expect(parseSessionResponse(viewport, { requestId: 'v', command: 'viewport' })).toMatchObject({
      ok: true,
      command: 'viewport',
      result: { x: 0, y: 24, width: 1080, height: 2376 },
    });
    const gesture = response({
      ...BASE,
      requestId: 'g',
      ok: 'true',
      kind: 'transform',
      injectedEvents: '22',
      elapsedMs: '410',
    });
    expect(parseSessionResponse(gesture, { requestId: 'g', command: 'gesture' })).toMatchObject({
      ok: true,
      result: { kind: 'transform', injectedEvents: 22, elapsedMs: 410 },
    });
    const quit = response({ ...BASE, requestId: 'q', ok: 'true' });
    expect(parseSessionResponse(quit, { requestId: 'q', command: 'quit' })).toMatchObject({
      ok: true,
      command: 'quit',
    });
  });

  const error = (
    bytes: Uint8Array,
    command: 'snapshot' | 'viewport' | 'gesture' = 'snapshot',
    requestId = 's1',
  ) => {
    const result = parseSessionResponse(bytes, { requestId, command });
    if (result.ok) throw new Error('expected failure');
    return result.error;
  };

  it('stale requestId → HELPER_PROTOCOL_ERROR', () => {
    const e = error(response(snapshotHeaders('s0', xml), xml));
    expect(e.code).toBe('HELPER_PROTOCOL_ERROR');
    expect(e.details).toMatchObject({ reason: 'stale-response', requestId: 's0', expectedRequestId: 's1' });
  });

  it('ok=false → HELPER_FAILED with errorType/message', () => {
    const e = error(
      response({
        ...BASE,
        requestId: 's1',
        ok: 'false',
        errorType: 'java.lang.IllegalStateException',
        message: 'no root',
      }),
    );
    expect(e.code).toBe('HELPER_FAILED');
    expect(e.details).toMatchObject({ errorType: 'java.lang.IllegalStateException', message: 'no root' });
  });

  it('byteLength mismatch, wrong protocol/format, missing blank line, bad header, body on viewport', () => {
    const short = xml.slice(0, -10);
    expect(error(response(snapshotHeaders('s1', xml), short)).details).toMatchObject({
      reason: 'byte-length-mismatch',
    });
    expect(
      error(response({ ...snapshotHeaders('s1', xml), agentDeviceProtocol: 'v0' }, xml)).details,
    ).toMatchObject({
      reason: 'protocol-mismatch',
    });
    expect(
      error(response({ ...snapshotHeaders('s1', xml), outputFormat: 'json' }, xml)).details,
    ).toMatchObject({
      reason: 'format-mismatch',
    });
    expect(
      error(Buffer.from('agentDeviceProtocol=android-snapshot-helper-v1\nrequestId=s1')).details,
    ).toMatchObject({
      reason: 'incomplete-headers',
    });
    expect(error(Buffer.from('garbage line\n\n')).details).toMatchObject({ reason: 'invalid-header' });
    const body = response(
      { ...BASE, requestId: 'v', ok: 'true', kind: 'viewport', x: '0', y: '0', width: '1', height: '1' },
      'x',
    );
    expect(error(body, 'viewport', 'v').details).toMatchObject({ reason: 'unexpected-body' });
  });

  it('property: never throws on arbitrary bytes or mutated responses', () => {
    const good = Buffer.from(response(snapshotHeaders('s1', xml), xml));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }),
          fc.tuple(fc.nat(), fc.nat({ max: 50 }), fc.uint8Array({ maxLength: 8 })).map(([at, del, ins]) => {
            const p = at % (good.length + 1);
            return Buffer.concat([good.subarray(0, p), ins, good.subarray(p + del)]);
          }),
        ),
        fc.constantFrom('snapshot', 'viewport', 'gesture', 'quit' as const),
        (bytes, command) => {
          const result = parseSessionResponse(bytes, { requestId: 's1', command });
          if (!result.ok) expect(['HELPER_FAILED', 'HELPER_PROTOCOL_ERROR']).toContain(result.error.code);
        },
      ),
      { numRuns: 400 },
    );
  });
});
