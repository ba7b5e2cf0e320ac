/**
 * Tool errors for agents: a bridge error becomes `isError: true` with its code, its message, the
 * request id and what to do next; the tools' own errors and transport failures alike; nothing is thrown.
 */
import { describe, expect, it } from 'vitest';
import { BridgeClientError } from '../../src/client/index.ts';
import { resultOfError, ToolError } from '../../src/mcp/tool-results.ts';

const text = (r: ReturnType<typeof resultOfError>) => (r.content[0] as { text: string }).text;

describe('tool errors', () => {
  it('a bridge error names its code, message, request id and the next step', () => {
    const r = resultOfError(new BridgeClientError(409, 'CONFLICT', 'no free device', true, 'req_1'));
    expect(r.isError).toBe(true);
    expect(text(r)).toBe(
      'CONFLICT: no free device (requestId req_1)\nNext: no device is free for that selector now: call acquire_device again with waitSeconds, or a wider selector',
    );
    expect(r.structuredContent).toMatchObject({ error: { code: 'CONFLICT' } });
  });

  it('a code without its own advice says whether to retry', () => {
    expect(text(resultOfError(new BridgeClientError(502, 'SOMETHING_NEW', 'x', true, undefined)))).toMatch(
      /\nNext: call again shortly$/,
    );
    expect(text(resultOfError(new BridgeClientError(500, 'INTERNAL', 'x', false, undefined)))).toMatch(
      /\nNext: check the arguments/,
    );
  });

  it("the tools' own errors, timeouts and unreachable bridges", () => {
    expect(text(resultOfError(new ToolError('STALE_REF', 'changed', 'take a new snapshot')))).toBe(
      'STALE_REF: changed\nNext: take a new snapshot',
    );
    const timeout = new DOMException('timed out', 'TimeoutError');
    expect(text(resultOfError(timeout))).toMatch(/^TIMEOUT: /);
    expect(text(resultOfError(new TypeError('fetch failed')))).toMatch(
      /^UNAVAILABLE: .*fetch failed\nNext: /,
    );
    expect(resultOfError('odd').isError).toBe(true);
  });
});
