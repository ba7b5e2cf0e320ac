/** Concurrent uploads per tenant and per node: refusals name the limit; an ended upload frees its place once. */
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { UploadGate } from '../../src/server/upload-gate.ts';

function limitOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    if (err instanceof BridgeError && err.code === 'RATE_LIMITED') return err.details?.['limit'];
    throw err;
  }
  return 'admitted';
}

describe('upload gate', () => {
  it('counts per tenant, then per node', () => {
    const gate = new UploadGate({ perTenant: 2, perNode: 3 });
    gate.admit('a');
    const second = gate.admit('a');
    expect(limitOf(() => gate.admit('a'))).toBe('uploads-per-tenant');
    gate.admit('b');
    expect(limitOf(() => gate.admit('c'))).toBe('uploads-per-node');
    second();
    second();
    expect(gate.active).toBe(2);
    expect(limitOf(() => gate.admit('c'))).toBe('admitted');
    expect(limitOf(() => gate.admit('a'))).toBe('uploads-per-node');
  });
});
