/** The one error table: code → status, the generic code of a status, and operations' error responses. */
import fc from 'fast-check';
import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import { errorResponses, HELPER_ERRORS, SECURED_ERRORS } from '../../src/api/index.ts';
import {
  BridgeError,
  codeForStatus,
  ERROR_CODE_NAMES,
  ERROR_CODES,
  type ErrorCode,
} from '../../src/errors.ts';

describe('error table', () => {
  it('gives each status one generic code: the first of the table with it', () => {
    expect(codeForStatus(400)).toBe('INVALID_ARGUMENT');
    expect(codeForStatus(401)).toBe('UNAUTHENTICATED');
    expect(codeForStatus(403)).toBe('PERMISSION_DENIED');
    expect(codeForStatus(404)).toBe('NOT_FOUND');
    expect(codeForStatus(409)).toBe('CONFLICT');
    expect(codeForStatus(413)).toBe('PAYLOAD_TOO_LARGE');
    expect(codeForStatus(415)).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(codeForStatus(429)).toBe('RATE_LIMITED');
    expect(codeForStatus(503)).toBe('UNAVAILABLE');
    expect(codeForStatus(504)).toBe('TIMEOUT');
    expect(codeForStatus(500)).toBe('INTERNAL');
    expect(codeForStatus(418)).toBe('INTERNAL');
  });

  it('maps any status back to a code of that status, or INTERNAL (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 599 }), (status) => {
        const code = codeForStatus(status);
        const known = ERROR_CODE_NAMES.some((c) => ERROR_CODES[c].status === status);
        expect(ERROR_CODES[code].status).toBe(known ? status : 500);
        expect(new BridgeError(code, 'x').status).toBe(known ? status : 500);
      }),
    );
  });

  it('describes every code, and BridgeError takes status and retryable from the table', () => {
    for (const code of ERROR_CODE_NAMES) {
      expect(ERROR_CODES[code].description.length, code).toBeGreaterThan(10);
      const err = new BridgeError(code, 'x');
      expect([err.status, err.retryable]).toEqual([ERROR_CODES[code].status, ERROR_CODES[code].retryable]);
    }
    expect(new HTTPException(413).status).toBe(ERROR_CODES.PAYLOAD_TOO_LARGE.status);
  });

  it('errorResponses: one response per status, naming exactly the codes asked for', () => {
    const responses = errorResponses(SECURED_ERRORS, HELPER_ERRORS, 'NOT_FOUND');
    const named = Object.entries(responses).flatMap(([status, r]) =>
      r['x-error-codes'].map((code) => {
        expect(ERROR_CODES[code].status, code).toBe(Number(status));
        expect(r.description).toContain(`\`${code}\``);
        return code;
      }),
    );
    const asked: ErrorCode[] = [...SECURED_ERRORS, ...HELPER_ERRORS, 'NOT_FOUND'];
    expect(named.sort()).toEqual([...new Set(asked)].sort());
    expect(Object.keys(responses).map(Number)).toEqual([400, 401, 403, 404, 421, 422, 429, 502, 503, 504]);
  });
});
