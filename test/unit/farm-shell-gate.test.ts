/**
 * Shell admission on one node: per lease, per tenant and the output budget of collected commands;
 * refusals are 429 naming the limit; a place given back is free again, and only once.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { ShellGate } from '../../src/helpers/farm/shell-gate.ts';

const limits = { perLease: 2, perTenant: 3, outputBudgetBytes: 10, outputBytesPerSecond: 1000 };

function refusal(fn: () => unknown): BridgeError {
  try {
    fn();
  } catch (err) {
    if (err instanceof BridgeError) return err;
    throw err;
  }
  throw new Error('admitted');
}

describe('shell gate', () => {
  it('refuses the third command on one lease, naming the limit; other leases still run', () => {
    const gate = new ShellGate(limits);
    gate.admit({ leaseId: 'a', tenant: 't', holdsBytes: 0 });
    gate.admit({ leaseId: 'a', tenant: 't', holdsBytes: 0 });
    const err = refusal(() => gate.admit({ leaseId: 'a', tenant: 't', holdsBytes: 0 }));
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.message).toContain('at most 2 at a time');
    expect(err.details).toMatchObject({ limit: 'per-lease', retryAfterSeconds: 1 });
    expect(() => gate.admit({ leaseId: 'b', tenant: 't', holdsBytes: 0 })).not.toThrow();
  });

  it('refuses a tenant past its limit over several leases; another tenant still runs', () => {
    const gate = new ShellGate(limits);
    for (const leaseId of ['a', 'b', 'c']) gate.admit({ leaseId, tenant: 't', holdsBytes: 0 });
    const err = refusal(() => gate.admit({ leaseId: 'd', tenant: 't', holdsBytes: 0 }));
    expect(err.details).toMatchObject({ limit: 'per-tenant' });
    expect(err.message).toContain('tenant t');
    expect(() => gate.admit({ leaseId: 'd', tenant: 'u', holdsBytes: 0 })).not.toThrow();
  });

  it('refuses output past the budget but admits a command that holds none', () => {
    const gate = new ShellGate(limits);
    gate.admit({ leaseId: 'a', tenant: 't', holdsBytes: 8 });
    const err = refusal(() => gate.admit({ leaseId: 'b', tenant: 'u', holdsBytes: 4 }));
    expect(err.details).toMatchObject({ limit: 'output-budget' });
    expect(err.message).toContain('stream the output');
    expect(() => gate.admit({ leaseId: 'b', tenant: 'u', holdsBytes: 0 })).not.toThrow();
  });

  it('a place given back is free again; giving it back twice frees it once', () => {
    const gate = new ShellGate(limits);
    const done = gate.admit({ leaseId: 'a', tenant: 't', holdsBytes: 10 });
    gate.admit({ leaseId: 'a', tenant: 't', holdsBytes: 0 });
    done();
    done();
    expect(gate.heldBytes).toBe(0);
    gate.admit({ leaseId: 'a', tenant: 't', holdsBytes: 10 });
    expect(refusal(() => gate.admit({ leaseId: 'a', tenant: 't', holdsBytes: 0 })).details).toMatchObject({
      limit: 'per-lease',
    });
  });

  it('property: the admitted never exceed any limit, and releasing everything leaves nothing held', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            leaseId: fc.constantFrom('a', 'b', 'c', 'd'),
            tenant: fc.constantFrom('t', 'u'),
            holdsBytes: fc.integer({ min: 0, max: 6 }),
            release: fc.boolean(),
          }),
          { maxLength: 60 },
        ),
        (steps) => {
          const gate = new ShellGate(limits);
          const live: Array<{ leaseId: string; tenant: string; holdsBytes: number; done: () => void }> = [];
          for (const s of steps) {
            if (s.release && live.length > 0) live.shift()!.done();
            try {
              live.push({ ...s, done: gate.admit(s) });
            } catch (err) {
              expect((err as BridgeError).code).toBe('RATE_LIMITED');
            }
            const count = (f: (x: (typeof live)[number]) => boolean) => live.filter(f).length;
            for (const l of ['a', 'b', 'c', 'd'])
              expect(count((x) => x.leaseId === l)).toBeLessThanOrEqual(2);
            for (const t of ['t', 'u']) expect(count((x) => x.tenant === t)).toBeLessThanOrEqual(3);
            expect(live.reduce((n, x) => n + x.holdsBytes, 0)).toBe(gate.heldBytes);
            expect(gate.heldBytes).toBeLessThanOrEqual(10);
          }
          for (const x of live) x.done();
          expect(gate.heldBytes).toBe(0);
        },
      ),
    );
  });

  it("paces a tenant's output: a second's worth at once, then a pause as long as the excess takes at the rate", () => {
    const gate = new ShellGate(limits);
    expect(gate.pace('t', 600, 0)).toBe(0);
    expect(gate.pace('t', 400, 0)).toBe(0);
    // 1,000 bytes/s: 500 more bytes at once owe half a second.
    expect(gate.pace('t', 500, 0)).toBe(500);
    // Another tenant has its own allowance.
    expect(gate.pace('u', 1000, 0)).toBe(0);
    // A second later 1,000 bytes came back: 500 of them were owed.
    expect(gate.pace('t', 500, 1000)).toBe(0);
    expect(gate.pace('t', 1, 1000)).toBe(1);
  });

  it('property: over any run the bytes let through without a pause never exceed a burst plus the rate times the time', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ bytes: fc.integer({ min: 1, max: 3000 }), after: fc.integer({ min: 0, max: 500 }) }),
          {
            maxLength: 50,
          },
        ),
        (steps) => {
          const gate = new ShellGate(limits);
          let now = 0;
          let sent = 0;
          for (const step of steps) {
            now += step.after;
            const wait = gate.pace('t', step.bytes, now);
            sent += step.bytes;
            // Waiting as told keeps what was read within burst + rate x time.
            now += wait;
            expect(sent).toBeLessThanOrEqual(limits.outputBytesPerSecond * (1 + now / 1000) + 1);
          }
        },
      ),
    );
  });
});
